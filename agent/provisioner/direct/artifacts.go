package direct

import (
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"time"

	"github.com/rackfence/rackfence/agent/artifact"
	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/configdrive"
	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/provisioner"
)

// DefaultImageWait bounds how long one Provision call waits for the rack's
// image cache to fetch and verify the image before it reports the host
// in progress (and is called again).
const DefaultImageWait = 30 * time.Second

// imageURL is the URL the BMC is given for the image: the rack's artifact
// server when the image cache is on and the image has a checksum, else its
// origin. done false: the cache is still fetching it (call again).
func (p *Provisioner) imageURL(ctx context.Context, h provisioner.Host) (url string, done bool, err error) {
	if p.art == nil || !p.art.CacheOn() {
		return h.Image.URL, true, nil
	}
	wctx, cancel := context.WithTimeout(ctx, p.imageWait)
	defer cancel()
	u, err := p.art.PrepareImage(wctx, h.Image)
	switch {
	case err == nil:
		return u, true, nil
	case errors.Is(err, artifact.ErrNoChecksum), errors.Is(err, artifact.ErrTooLarge):
		p.log.Warn("image not cached: the BMC fetches it from its origin", "host", h.Name, "url", h.Image.URL, "reason", err.Error())
		return h.Image.URL, true, nil
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return "", false, nil
	case errors.Is(err, artifact.ErrChecksumMismatch), errors.Is(err, artifact.ErrChecksumFile):
		return "", false, fmt.Errorf("%w: host %s: %v", errclass.ErrFailed, h.Name, err)
	case errors.Is(err, artifact.ErrOrigin):
		return "", false, fmt.Errorf("%w: host %s: %v", errclass.ErrTransient, h.Name, err)
	}
	return "", false, fmt.Errorf("%w: host %s: image cache: %v", errclass.ErrFailed, h.Name, err)
}

// publishDrive builds the host's config drive and publishes it on the
// artifact server; "" when the host has none.
func (p *Provisioner) publishDrive(h provisioner.Host) (string, error) {
	if h.ConfigDrive == nil {
		return "", nil
	}
	img, err := configdrive.Build(configdrive.Input{UUID: hostUUID(h), Name: h.Name, Hostname: h.Name, Content: *h.ConfigDrive})
	if err != nil {
		return "", fmt.Errorf("%w: host %s: %v", errclass.ErrFailed, h.Name, err)
	}
	return p.art.PublishDrive(h.Name, img)
}

// checkDrive refuses a config drive this agent or BMC cannot insert (no
// artifact server, IPMI, no second virtual media device), before anything
// is changed or fetched.
func (p *Provisioner) checkDrive(ctx context.Context, h provisioner.Host, c *bmc.Conn) error {
	if h.ConfigDrive == nil {
		return nil
	}
	if c.Protocol() == "ipmi" {
		return fmt.Errorf("%w: host %s has userData/networkData/metaData, which the direct provisioner inserts as a config drive by Redfish virtual media; IPMI has none: use a redfish:// BMC address or --provisioner ironic",
			errclass.ErrUnsupported, h.Name)
	}
	if p.art == nil {
		return fmt.Errorf("%w: host %s has userData/networkData/metaData, but this agent serves no config drives: start rackfence-agent with --artifact-addr (and --artifact-url as the BMCs reach it)",
			errclass.ErrUnsupported, h.Name)
	}
	if _, err := c.ConfigDriveDevice(ctx); err != nil {
		return err
	}
	return nil
}

// forgetDrive stops serving the host's config drive.
func (p *Provisioner) forgetDrive(h provisioner.Host) {
	p.drives.forget(h.Name)
	if p.art != nil {
		p.art.RemoveDrive(h.Name)
	}
}

// hasDrive reports whether a config drive may be inserted for the host
// (the spec names one, or this agent published one).
func (p *Provisioner) hasDrive(h provisioner.Host) bool {
	return h.ConfigDrive != nil || (p.art != nil && p.art.HasDrive(h.Name))
}

// hostUUID is meta_data.json's uuid: the provisioner's ID when it has
// one, else a name-based UUID (version 5 layout) stable across provisions.
func hostUUID(h provisioner.Host) string {
	if h.ProvisioningID != "" {
		return h.ProvisioningID
	}
	sum := sha1.Sum([]byte("rackfence host " + h.Name))
	sum[6] = (sum[6] & 0x0f) | 0x50
	sum[8] = (sum[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])
}
