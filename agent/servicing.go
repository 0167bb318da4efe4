package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
)

// Servicing: the firmware-update action. One call does one step and
// returns: adopt the recorded task, read it once (InProgress while it
// runs), end its record, or start the next component's flash and record
// it. The state machine calls it again after its poll interval.

// taskRecorder is the coordinator's BMC task record (*client.Client).
type taskRecorder interface {
	StartTask(ctx context.Context, name string, r wire.BMCTaskRequest) (*wire.BMCTask, error)
	EndTask(ctx context.Context, name string, r wire.BMCTaskEnd) (*wire.Host, error)
}

// dayTwoSource is a provisioner that hands out a host's BMC session for
// day-two work (the direct provisioner).
type dayTwoSource interface {
	DayTwo(ctx context.Context, h provisioner.Host) (bmc.DayTwo, error)
}

// taskMemo is what this session recorded or ended itself, ahead of the
// watch: a task it recorded is followed even before the watch brings it
// back, and one it ended is not adopted again from a stale copy.
type taskMemo struct {
	mu    sync.Mutex
	held  map[string]wire.BMCTask
	ended map[string]string // host → task URI ended
	// from is the version a component showed when this session started
	// its flash (host NUL component); flashed the components without a
	// spec version this session brought to a new version, by the image
	// URL flashed (host → component → URL), so they are not flashed again
	// for the same URL (as metal3 flashes a component again only when its
	// URL changes). Kept for the session: a host view older than the
	// servicing's end must not flash the component again.
	from    map[string]string
	flashed map[string]map[string]string
}

// started remembers the version a component showed before its flash.
func (m *taskMemo) started(host, component, from string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.from == nil {
		m.from = map[string]string{}
	}
	m.from[host+"\x00"+component] = from
}

// before is the version the component showed before this session's
// flash; ok false when this session did not start it (adopted).
func (m *taskMemo) before(host, component string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.from[host+"\x00"+component]
	return v, ok
}

// updated records a component without a spec version as flashed from url.
func (m *taskMemo) updated(host, component, url string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.flashed == nil {
		m.flashed = map[string]map[string]string{}
	}
	if m.flashed[host] == nil {
		m.flashed[host] = map[string]string{}
	}
	m.flashed[host][component] = url
}

// wasUpdated: the component was flashed from url by this session.
func (m *taskMemo) wasUpdated(host, component, url string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.flashed[host][component] == url && url != ""
}

func (m *taskMemo) current(name string, fromWatch *wire.BMCTask) *wire.BMCTask {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, ok := m.held[name]; ok {
		return &t
	}
	if fromWatch != nil && m.ended[name] == fromWatch.TaskURI {
		return nil
	}
	return fromWatch
}

func (m *taskMemo) hold(name string, t wire.BMCTask) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.held == nil {
		m.held, m.ended = map[string]wire.BMCTask{}, map[string]string{}
	}
	m.held[name] = t
	delete(m.ended, name)
}

func (m *taskMemo) end(name, uri string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.held == nil {
		m.held, m.ended = map[string]wire.BMCTask{}, map[string]string{}
	}
	delete(m.held, name)
	m.ended[name] = uri
}

// firmwareUpdate is ActionFirmwareUpdate.
func (s *session) firmwareUpdate(ctx context.Context, h wire.Host, ph provisioner.Host) (provisioner.Result, error) {
	if sv, ok := s.a.cfg.Provisioner.(provisioner.Servicer); ok {
		// The back end runs and follows the flash itself (Ironic: a
		// manual clean that holds the node until the BMC's task ended),
		// and a new lease holder finds it there: no BMC task record.
		return sv.Service(ctx, ph, provisioner.DayTwoSpec{Firmware: h.Firmware})
	}
	rec, ok := s.a.cfg.Client.(taskRecorder)
	if !ok {
		return provisioner.Result{}, fmt.Errorf("%w: this agent's coordinator client cannot record BMC tasks", errclass.ErrUnsupported)
	}
	src, ok := s.a.cfg.Provisioner.(dayTwoSource)
	if !ok {
		return provisioner.Result{}, fmt.Errorf("%w: the %s provisioner does not update firmware (use --provisioner direct, or remove spec.firmware)",
			errclass.ErrUnsupported, s.a.cfg.Provisioner.Name())
	}
	d, err := src.DayTwo(ctx, ph)
	if err != nil {
		return provisioner.Result{}, err
	}
	if t := s.tasks.current(h.Name, h.Task); t != nil {
		res, done, err := s.followFlash(ctx, rec, d, h, *t)
		if err != nil || !done {
			return res, err
		}
	}
	return s.nextFlash(ctx, rec, d, h)
}

// followFlash follows the recorded firmware task (followTask) and judges
// it by the inventory alone once it ended. done: the record is ended and
// the component at its version.
func (s *session) followFlash(ctx context.Context, rec taskRecorder, d bmc.DayTwo, h wire.Host, t wire.BMCTask) (provisioner.Result, bool, error) {
	if t.Kind != wire.BMCTaskFirmware {
		return otherTask(t), false, nil
	}
	comp, _ := specComponent(h.Firmware, t.Component)
	return s.followTask(ctx, rec, d, h, t, taskJudge{what: "firmware update of " + t.Component, timeout: comp.EffectiveTimeout(),
		judge: func(ctx context.Context, ts *bmc.TaskStatus, gone bool) (string, string, error) {
			return s.judgeFlash(ctx, d, h, t, comp, ts, gone)
		}})
}

// judgeFlash: an ended (or forgotten) flash is judged by the inventory
// alone, never by the task's word.
func (s *session) judgeFlash(ctx context.Context, d bmc.DayTwo, h wire.Host, t wire.BMCTask, comp wire.FirmwareComponent, ts *bmc.TaskStatus, gone bool) (string, string, error) {
	items, err := d.FirmwareInventory(ctx)
	if err != nil {
		return "", "", err
	}
	it, found := bmc.FindFirmware(items, t.Component)
	outcome, msg := wire.BMCTaskSucceeded, ""
	from, known := s.tasks.before(h.Name, t.Component)
	if !known && t.FromVersion != "" {
		// Adopted: the record keeps the version the component showed
		// before the flash, so "done = a version other than before"
		// holds across a takeover.
		from, known = t.FromVersion, true
	}
	switch {
	case found && bmc.VersionMatches(it.Version, comp.Version):
		msg = fmt.Sprintf("%s at version %s", t.Component, it.Version)
	case found && comp.Version == "" && known && it.Version != from:
		// No version in the spec (metal3's HostFirmwareComponents has
		// none): done is a version other than the one before.
		msg = fmt.Sprintf("%s at version %s (was %s; no version in the spec: a new version is done)", t.Component, it.Version, from)
		s.tasks.updated(h.Name, t.Component, comp.URL)
	case found && comp.Version == "" && !known && !gone && ts.State == "Completed":
		// Adopted: the version before the flash was this session's
		// predecessor's to know; the task's Completed is all there is.
		msg = fmt.Sprintf("%s at version %s (no version in the spec, and the version before the flash was not known to this lease holder: the BMC's task Completed)", t.Component, it.Version)
		s.tasks.updated(h.Name, t.Component, comp.URL)
	case comp.Version == "" && gone:
		outcome, msg = wire.BMCTaskLost, fmt.Sprintf("the BMC no longer knows task %s and %s shows version %q (no version in the spec to check it against)", t.TaskURI, t.Component, it.Version)
	case comp.Version == "":
		outcome = wire.BMCTaskFailed
		msg = fmt.Sprintf("task %s ended %s and %s still shows version %q, the one before the flash (no version in the spec: done is a version other than the one before)", t.TaskURI, ts, t.Component, it.Version)
	case gone:
		outcome, msg = wire.BMCTaskLost, fmt.Sprintf("the BMC no longer knows task %s and %s shows version %q, not %q", t.TaskURI, t.Component, it.Version, comp.Version)
	default:
		outcome = wire.BMCTaskFailed
		msg = fmt.Sprintf("task %s ended %s and %s shows version %q, not %q", t.TaskURI, ts, t.Component, it.Version, comp.Version)
	}
	return outcome, msg, nil
}

// nextFlash starts the flash of the first component not at its version
// and records it; with none left it reports them all done.
func (s *session) nextFlash(ctx context.Context, rec taskRecorder, d bmc.DayTwo, h wire.Host) (provisioner.Result, error) {
	items, err := d.FirmwareInventory(ctx)
	if err != nil {
		return provisioner.Result{}, err
	}
	var done []string
	for i, c := range h.Firmware {
		it, ok := bmc.FindFirmware(items, c.Component)
		if !ok {
			return provisioner.Result{}, fmt.Errorf("%w: firmware[%d].component %q: the BMC's firmware inventory has no such item (bmc, bios, or one of the items' Id or Name)", errclass.ErrFailed, i, c.Component)
		}
		if bmc.VersionMatches(it.Version, c.Version) || (c.Version == "" && s.tasks.wasUpdated(h.Name, c.Component, c.URL)) {
			done = append(done, c.Component+" "+it.Version)
			continue
		}
		if from, known := s.tasks.before(h.Name, c.Component); c.Version == "" && known && it.Version != from {
			// This session started a flash whose answer or record was
			// lost (a timeout): the new version says it took.
			s.tasks.updated(h.Name, c.Component, c.URL)
			done = append(done, c.Component+" "+it.Version)
			continue
		}
		image, note, ready, err := s.firmwareImage(ctx, h.Name, fmt.Sprintf("firmware[%d]", i), c)
		if err != nil {
			return provisioner.Result{}, err
		}
		if !ready {
			return provisioner.Result{InProgress: true, Message: fmt.Sprintf("fetching the image of %s (%s) into the rack's image cache and verifying it before the BMC is given it", c.Component, c.URL)}, nil
		}
		// Remembered before the BMC is asked: an update it accepts but
		// whose answer is lost is then known by the version changing.
		s.tasks.started(h.Name, c.Component, it.Version)
		u, err := d.StartUpdate(ctx, s.a.cfg.Guard, h.Name, bmc.UpdateRequest{Component: it.URI, ImageURL: image, Version: c.Version})
		if errors.Is(err, bmc.ErrUpdateInProgress) {
			// A flash runs that no record names: an agent stopped between
			// the BMC's answer and the record. The BMC refuses a second
			// one; wait for it to end (servicing holds power meanwhile).
			return provisioner.Result{InProgress: true, Message: "the BMC runs a firmware update not recorded here; waiting for it to end: " + err.Error()}, nil
		}
		if err != nil {
			return provisioner.Result{}, err
		}
		uri := u.Task
		if uri == "" {
			uri = u.Monitor
		}
		if uri == "" {
			return provisioner.Result{}, fmt.Errorf("%w: the BMC accepted the update of %s but named no task to follow", errclass.ErrFailed, c.Component)
		}
		if _, err := s.recordTask(ctx, rec, h, wire.BMCTaskRequest{Kind: wire.BMCTaskFirmware, TaskURI: uri,
			Component: c.Component, FromVersion: it.Version}); err != nil {
			return provisioner.Result{}, err
		}
		to := c.Version
		if to == "" {
			to = "a new version (none in the spec: done when it shows a version other than " + it.Version + ")"
		}
		if note != "" {
			note = "; image " + note
		}
		s.log.Info("firmware update started and recorded", "host", h.Name, "component", c.Component, "from", it.Version, "to", c.Version,
			"task", uri, "image", image, "verified", note == "")
		return provisioner.Result{InProgress: true, Message: fmt.Sprintf("firmware update of %s from %s to %s started (task %s)%s", c.Component, it.Version, to, uri, note)}, nil
	}
	return provisioner.Result{Message: "firmware at its versions: " + strings.Join(done, ", "),
		DayTwo: &wire.DayTwoStatus{Firmware: firmwareStatus(items)}}, nil
}

// firmwareImages is a provisioner that serves firmware images from the
// rack's artifact server (the direct provisioner).
type firmwareImages interface {
	FirmwareImageURL(ctx context.Context, host, at string, c wire.FirmwareComponent) (url, note string, done bool, err error)
}

// firmwareImage is the URL the BMC is given for a component's image: the
// rack's artifact server, verified against the checksum before a byte
// goes out, where the provisioner serves one; else the origin (note says
// it was not verified). ready false: the image is still being fetched.
func (s *session) firmwareImage(ctx context.Context, host, at string, c wire.FirmwareComponent) (url, note string, ready bool, err error) {
	fi, ok := s.a.cfg.Provisioner.(firmwareImages)
	if !ok {
		if c.Checksum == "" {
			return c.URL, "not verified: " + at + ".checksum is empty", true, nil
		}
		return c.URL, "checksum not verified: this provisioner serves no images", true, nil
	}
	return fi.FirmwareImageURL(ctx, host, at, c)
}

// specComponent is the spec's entry for a component (zero when gone).
func specComponent(fw []wire.FirmwareComponent, name string) (wire.FirmwareComponent, bool) {
	for _, c := range fw {
		if c.Component == name {
			return c, true
		}
	}
	return wire.FirmwareComponent{Component: name}, false
}

// firmwareStatus is the inventory as status.dayTwo shows it.
func firmwareStatus(items []bmc.FirmwareItem) []wire.FirmwareStatus {
	out := make([]wire.FirmwareStatus, 0, len(items))
	for _, it := range items {
		name := it.Name
		if name == "" {
			name = it.ID
		}
		out = append(out, wire.FirmwareStatus{Component: name, Version: it.Version, Updateable: it.Updateable})
	}
	return out
}
