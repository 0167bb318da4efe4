package direct

import (
	"fmt"
	"sync"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
)

// DefaultDriveReadTimeout bounds how long provisioning waits, after the
// host was powered on, for its BMC to read the inserted config drive from
// the artifact server (rackfence-agent --config-drive-read-timeout). A
// host whose BMC has not read it by then fails provisioning: it booted
// without its user data.
const DefaultDriveReadTimeout = 5 * time.Minute

// driveWaits are the hosts powered on with a config drive their BMC has
// not read yet: the drive's URL and when to give up.
type driveWaits struct {
	mu sync.Mutex
	m  map[string]driveWait
}

type driveWait struct {
	url      string
	deadline time.Time
}

func (w *driveWaits) set(host, url string, deadline time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]driveWait{}
	}
	w.m[host] = driveWait{url: url, deadline: deadline}
}

// get returns the host's wait when it is for url.
func (w *driveWaits) get(host, url string) (driveWait, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	d, ok := w.m[host]
	return d, ok && d.url == url
}

func (w *driveWaits) forget(host string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, host)
}

// driveStatus is the host's config drive as the artifact server saw it
// (nil without one).
func (p *Provisioner) driveStatus(host string) *wire.ConfigDriveStatus {
	if p.art == nil {
		return nil
	}
	d, ok := p.art.DriveStatus(host)
	if !ok {
		return nil
	}
	return &wire.ConfigDriveStatus{Server: p.art.BaseURL(), Size: d.Size, PublishedAt: d.PublishedAt, ReadAt: d.ReadAt}
}

// awaitDriveRead ends a provision that inserted the config drive at url
// and powered the host on: done once the BMC has read the drive, in
// progress until the drive-read deadline, then a failure (ErrFailed)
// naming the drive and what to check. res is the power-on's result.
func (p *Provisioner) awaitDriveRead(h provisioner.Host, url string, res provisioner.Result) (provisioner.Result, error) {
	cd := p.driveStatus(h.Name)
	res.ConfigDrive = cd
	if cd == nil {
		p.drives.forget(h.Name)
		return res, fmt.Errorf("%w: host %s: its config drive is no longer served (removed while provisioning): provisioning starts again", errclass.ErrTransient, h.Name)
	}
	if !cd.ReadAt.IsZero() {
		p.drives.forget(h.Name)
		res.Message = joinMsg(res.Message, "the BMC read the config drive")
		return res, nil
	}
	w, ok := p.drives.get(h.Name, url)
	if !ok {
		w = driveWait{url: url, deadline: time.Now().Add(p.driveRead)}
		p.drives.set(h.Name, url, w.deadline)
	}
	if time.Now().After(w.deadline) {
		p.drives.forget(h.Name)
		return res, fmt.Errorf("%w: host %s: its BMC has not read the config drive (%d bytes, published %s) within %s of power-on, so the host booted without its user data: check that the BMC reaches the agent's artifact server at %s (--artifact-url: routing, firewall, TLS) and the config drive's virtual media device at the BMC (inserted, connected); raise --config-drive-read-timeout for a BMC that reads media late",
			errclass.ErrFailed, h.Name, cd.Size, cd.PublishedAt.UTC().Format(time.RFC3339), p.driveRead, p.art.BaseURL())
	}
	res.InProgress = true
	res.Message = joinMsg(res.Message, "waiting for the BMC to read the config drive")
	return res, nil
}
