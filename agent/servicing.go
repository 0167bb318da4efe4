package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/client"
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
		return provisioner.Result{}, fmt.Errorf("%w: this agent's coordinator client cannot record BMC tasks", provisioner.ErrUnsupported)
	}
	src, ok := s.a.cfg.Provisioner.(dayTwoSource)
	if !ok {
		return provisioner.Result{}, fmt.Errorf("%w: the %s provisioner does not update firmware (use --provisioner direct, or remove spec.firmware)",
			provisioner.ErrUnsupported, s.a.cfg.Provisioner.Name())
	}
	d, err := src.DayTwo(ctx, ph)
	if err != nil {
		return provisioner.Result{}, err
	}
	if t := s.tasks.current(h.Name, h.Task); t != nil {
		res, done, err := s.followTask(ctx, rec, d, h, *t)
		if err != nil || !done {
			return res, err
		}
	}
	return s.nextFlash(ctx, rec, d, h)
}

// followTask adopts the recorded task when it was recorded under another
// epoch, reads it once and, once it ended, ends its record. done: the
// record is ended and the component at its version.
func (s *session) followTask(ctx context.Context, rec taskRecorder, d bmc.DayTwo, h wire.Host, t wire.BMCTask) (provisioner.Result, bool, error) {
	if t.Kind != wire.BMCTaskFirmware {
		return provisioner.Result{InProgress: true, Message: fmt.Sprintf("a %s task (%s) is recorded on the host: waiting for it to end", t.Kind, t.TaskURI)}, false, nil
	}
	epoch := s.lease.Epoch
	if t.Epoch != epoch && t.AdoptedEpoch != epoch {
		got, err := rec.StartTask(ctx, h.Name, wire.BMCTaskRequest{Epoch: epoch, CreatedIndex: h.CreatedIndex,
			Kind: t.Kind, TaskURI: t.TaskURI, Component: t.Component})
		if err != nil {
			return provisioner.Result{}, false, taskRecordErr("adopt the firmware task "+t.TaskURI, err)
		}
		t = *got
		s.log.Info("adopted the firmware task recorded under an earlier epoch; following it, never starting another",
			"host", h.Name, "component", t.Component, "task", t.TaskURI, "startedEpoch", t.Epoch)
	}
	s.tasks.hold(h.Name, t)
	comp, _ := specComponent(h.Firmware, t.Component)
	ts, err := d.Task(ctx, t.TaskURI)
	gone := errors.Is(err, bmc.ErrTaskGone)
	switch {
	case err != nil && !gone:
		return provisioner.Result{}, false, err
	case !gone && !ts.Ended():
		if time.Since(t.StartedAt) > comp.EffectiveTimeout() {
			return provisioner.Result{}, false, fmt.Errorf("%w: firmware update of %s (%s) still runs after its timeout %s: the record and the power hold stay; check the BMC, never power-cycle it mid-flash",
				provisioner.ErrFailed, t.Component, t.TaskURI, comp.EffectiveTimeout())
		}
		return provisioner.Result{InProgress: true, Message: fmt.Sprintf("firmware update of %s: %s", t.Component, ts)}, false, nil
	}
	// Ended (or forgotten by the BMC): the inventory alone says whether
	// the flash took.
	items, err := d.FirmwareInventory(ctx)
	if err != nil {
		return provisioner.Result{}, false, err
	}
	it, found := bmc.FindFirmware(items, t.Component)
	outcome, msg := wire.BMCTaskSucceeded, ""
	switch {
	case found && bmc.VersionMatches(it.Version, comp.Version):
		msg = fmt.Sprintf("%s at version %s", t.Component, it.Version)
	case gone:
		outcome, msg = wire.BMCTaskLost, fmt.Sprintf("the BMC no longer knows task %s and %s shows version %q, not %q", t.TaskURI, t.Component, it.Version, comp.Version)
	default:
		outcome = wire.BMCTaskFailed
		msg = fmt.Sprintf("task %s ended %s and %s shows version %q, not %q", t.TaskURI, ts, t.Component, it.Version, comp.Version)
	}
	if _, err := rec.EndTask(ctx, h.Name, wire.BMCTaskEnd{Epoch: epoch, TaskURI: t.TaskURI, Outcome: outcome, Message: msg}); err != nil && !client.IsNotFound(err) {
		return provisioner.Result{}, false, taskRecordErr("end the firmware task "+t.TaskURI, err)
	}
	s.tasks.end(h.Name, t.TaskURI)
	s.log.Info("firmware task ended", "host", h.Name, "component", t.Component, "task", t.TaskURI, "outcome", outcome, "msg", msg)
	if outcome != wire.BMCTaskSucceeded {
		return provisioner.Result{}, false, fmt.Errorf("%w: firmware update of %s: %s", provisioner.ErrFailed, t.Component, msg)
	}
	return provisioner.Result{}, true, nil
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
		if c.Version == "" {
			return provisioner.Result{}, fmt.Errorf("%w: firmware[%d].version is empty: the agent needs the version the component shows once updated to know it is done (set it)", provisioner.ErrFailed, i)
		}
		it, ok := bmc.FindFirmware(items, c.Component)
		if !ok {
			return provisioner.Result{}, fmt.Errorf("%w: firmware[%d].component %q: the BMC's firmware inventory has no such item (bmc, bios, or one of the items' Id or Name)", provisioner.ErrFailed, i, c.Component)
		}
		if bmc.VersionMatches(it.Version, c.Version) {
			done = append(done, c.Component+" "+it.Version)
			continue
		}
		u, err := d.StartUpdate(ctx, s.a.cfg.Guard, h.Name, bmc.UpdateRequest{Component: it.URI, ImageURL: c.URL, Version: c.Version})
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
			return provisioner.Result{}, fmt.Errorf("%w: the BMC accepted the update of %s but named no task to follow", provisioner.ErrFailed, c.Component)
		}
		t, err := rec.StartTask(ctx, h.Name, wire.BMCTaskRequest{Epoch: s.lease.Epoch, CreatedIndex: h.CreatedIndex,
			Kind: wire.BMCTaskFirmware, TaskURI: uri, Component: c.Component})
		if err != nil {
			return provisioner.Result{}, taskRecordErr("record the firmware task "+uri+" the BMC started", err)
		}
		s.tasks.hold(h.Name, *t)
		s.log.Info("firmware update started and recorded", "host", h.Name, "component", c.Component, "from", it.Version, "to", c.Version, "task", uri)
		return provisioner.Result{InProgress: true, Message: fmt.Sprintf("firmware update of %s from %s to %s started (task %s)", c.Component, it.Version, c.Version, uri)}, nil
	}
	return provisioner.Result{Message: "firmware at its versions: " + strings.Join(done, ", ")}, nil
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

// taskRecordErr classifies a refused task record: a stale epoch fences
// this agent; anything else is retried.
func taskRecordErr(what string, err error) error {
	if client.IsStaleEpoch(err) {
		return fmt.Errorf("%w: %s: %v", guard.ErrFenced, what, err)
	}
	if client.IsNotFound(err) {
		return fmt.Errorf("%w: %s: %v", provisioner.ErrFailed, what, err)
	}
	return fmt.Errorf("%w: %s: %v", provisioner.ErrTransient, what, err)
}
