package direct

import (
	"context"
	"errors"
	"fmt"

	"github.com/rackfence/rackfence/agent/artifact"
	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/shared/wire"
)

// FirmwareImageURL is where a BMC fetches a firmware image from: the
// image on the rack's artifact server, verified against the component's
// checksum before a byte of it is served, or its origin when it cannot be
// cached (note says why it was not verified; "" when it was).
//
// It prepares a firmware image for the BMC as OS images are:
// with a checksum and the rack's image cache, the image is fetched from
// its origin once per rack (however many hosts flash it), verified, and
// served from the artifact server. done false: the cache is still
// fetching it (call again). A checksum mismatch is ErrFailed naming the
// component, the image's URL, the expected and the actual digest; nothing
// was sent to the BMC.
func (p *Provisioner) FirmwareImageURL(ctx context.Context, host string, at string, c wire.FirmwareComponent) (url, note string, done bool, err error) {
	switch {
	case c.Checksum == "":
		return c.URL, "not verified: " + at + ".checksum is empty, the BMC fetches the image from its origin", true, nil
	case p.art == nil || !p.art.CacheOn():
		return c.URL, "checksum not verified: this agent has no image cache (--image-cache-dir), the BMC fetches the image from its origin", true, nil
	}
	wctx, cancel := context.WithTimeout(ctx, p.imageWait)
	defer cancel()
	u, err := p.art.PrepareImage(wctx, &wire.Image{URL: c.URL, Checksum: c.Checksum})
	var mm *artifact.MismatchError
	switch {
	case err == nil:
		return u, "", true, nil
	case errors.As(err, &mm):
		return "", "", false, fmt.Errorf("%w: host %s: %s (component %s): image %s does not match its checksum: expected %s:%s, got %s:%s; nothing was sent to the BMC: fix %s.checksum or the image at its origin",
			errclass.ErrFailed, host, at, c.Component, c.URL, mm.Algo, mm.Want, mm.Algo, mm.Got, at)
	case errors.Is(err, artifact.ErrTooLarge):
		p.log.Warn("firmware image not cached: the BMC fetches it from its origin", "host", host, "component", c.Component, "url", c.URL, "reason", err.Error())
		return c.URL, "checksum not verified: " + err.Error(), true, nil
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return "", "", false, nil
	case errors.Is(err, artifact.ErrOrigin):
		return "", "", false, fmt.Errorf("%w: host %s: %s (component %s): %v", errclass.ErrTransient, host, at, c.Component, err)
	}
	return "", "", false, fmt.Errorf("%w: host %s: %s (component %s): image cache: %v", errclass.ErrFailed, host, at, c.Component, err)
}
