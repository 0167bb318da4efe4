package fsm

import (
	"fmt"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// applyBMCTask records, adopts or ends a host's BMC task record. Fenced
// like a status report (the rack's current lease epoch, a host of the
// rack), decided inside Apply. The record survives lease changes: only
// the lease holder's end (or the host's removal) drops it.
func (f *FSM) applyBMCTask(t *tx, c BMCTaskCmd) (any, error) {
	if (c.Start == nil) == (c.End == nil) {
		return nil, newErr(wire.CodeBadRequest, "a BMC task write is a start or an end, not both or neither")
	}
	old := f.s.Hosts[c.Name].rec()
	if old == nil {
		return nil, notFound("host %s does not exist", c.Name)
	}
	if old.Rack != c.Rack {
		return nil, newErr(wire.CodeForbidden, "host %s is in rack %s, not %s: an agent records tasks only on hosts of its own rack", c.Name, old.Rack, c.Rack)
	}
	if err := f.checkEpoch(c.Rack, c.epoch()); err != nil {
		return nil, err
	}
	if c.Start != nil {
		return f.startBMCTask(t, old, c)
	}
	return f.endBMCTask(t, old, c)
}

func (f *FSM) startBMCTask(t *tx, old *hostRec, c BMCTaskCmd) (any, error) {
	s := c.Start
	if s.CreatedIndex != old.CreatedIndex {
		return nil, notFound("host %s was deleted and created again (createdIndex %d, the request names %d): the task was started for a host that is gone", c.Name, old.CreatedIndex, s.CreatedIndex)
	}
	lease := f.s.Racks[c.Rack].Lease
	if cur := old.Task; cur != nil {
		if cur.Kind != s.Kind || cur.TaskURI != s.TaskURI || cur.Component != s.Component {
			return nil, &Error{Code: wire.CodeBMCTaskRunning, Message: fmt.Sprintf(
				"host %s already runs %s; follow it to its end and end its record (DELETE /v1/hosts/%s/task) before starting another",
				c.Name, describeTask(cur), c.Name)}
		}
		if cur.Epoch == s.Epoch || cur.AdoptedEpoch == s.Epoch {
			return *cur, nil // recorded already under this epoch (a retry)
		}
		task := *cur
		task.AdoptedEpoch = s.Epoch
		f.storeTask(t, old, &task, wire.Event{Type: wire.EventNormal, Reason: wire.ReasonBMCTaskAdopted,
			Message: fmt.Sprintf("%s adopted by %s under epoch %d", describeTask(cur), lease.Holder, s.Epoch)}, c.Time)
		return task, nil
	}
	task := wire.BMCTask{Kind: in(s.Kind), TaskURI: s.TaskURI, Component: in(s.Component), Epoch: s.Epoch,
		Holder: in(lease.Holder), StartedAt: c.Time, CreatedIndex: t.index, FromVersion: s.FromVersion}
	f.storeTask(t, old, &task, wire.Event{Type: wire.EventNormal, Reason: wire.ReasonBMCTaskStarted,
		Message: "started " + describeTask(&task)}, c.Time)
	return task, nil
}

func (f *FSM) endBMCTask(t *tx, old *hostRec, c BMCTaskCmd) (any, error) {
	e := c.End
	cur := old.Task
	if cur == nil {
		return nil, notFound("host %s has no BMC task record (already ended?)", c.Name)
	}
	if e.TaskURI != "" && e.TaskURI != cur.TaskURI {
		return nil, conflict("host %s's task record is %s, not the task %s: end the task the record names", c.Name, describeTask(cur), e.TaskURI)
	}
	ev := wire.Event{Type: wire.EventNormal, Reason: wire.ReasonBMCTaskEnded,
		Message: describeTask(cur) + " " + e.Outcome}
	if e.Outcome != wire.BMCTaskSucceeded {
		ev.Type = wire.EventWarning
	}
	if e.Message != "" {
		ev.Message += ": " + e.Message
	}
	rec := f.storeTask(t, old, nil, ev, c.Time)
	return rec.Host, nil
}

// storeTask stores old with task as its record and ev appended to its
// events; every watcher of the rack sees it (an agent's status-less watch
// carries Host.Task).
func (f *FSM) storeTask(t *tx, old *hostRec, task *wire.BMCTask, ev wire.Event, at time.Time) *hostRec {
	rec := *old
	rec.Task = task
	ev.Source = "coordinator"
	rec.Events = appendEvents(old.Events, []wire.Event{ev}, t.index, at)
	f.storeHost(t, &rec)
	return &rec
}

// describeTask names a task for messages: its kind, component, BMC task
// URI and when it started.
func describeTask(task *wire.BMCTask) string {
	s := "a " + task.Kind + " task"
	if task.Kind == wire.BMCTaskErase {
		s = "an erase task"
	}
	switch {
	case task.Component == "":
	case task.Kind == wire.BMCTaskFirmware:
		s += " of component " + task.Component
	default:
		s += " " + task.Component // the operation and the resource it acts on
	}
	return s + " (BMC task " + task.TaskURI + ", started " + task.StartedAt.UTC().Format(time.RFC3339) + ")"
}

// cloneDayTwo copies a host spec's day-two fields, so the stored spec
// shares nothing with the command; empty settings and lists are stored as
// none (an empty and an absent one are the same spec).
func cloneDayTwo(h *wire.Host) {
	if b := h.BIOS; b != nil {
		c := wire.BIOSSpec{SimultaneousMultithreadingEnabled: cloneBool(b.SimultaneousMultithreadingEnabled),
			SRIOVEnabled: cloneBool(b.SRIOVEnabled), VirtualizationEnabled: cloneBool(b.VirtualizationEnabled)}
		if len(b.Settings) > 0 {
			c.Settings = make(map[string]string, len(b.Settings))
			for k, v := range b.Settings {
				c.Settings[in(k)] = in(v)
			}
		}
		h.BIOS = &c
	}
	if len(h.Firmware) == 0 {
		h.Firmware = nil
	} else {
		fw := make([]wire.FirmwareComponent, len(h.Firmware))
		for i, c := range h.Firmware {
			c.Component, c.URL, c.Version = in(c.Component), in(c.URL), in(c.Version)
			fw[i] = c
		}
		h.Firmware = fw
	}
	if r := h.RAID; r != nil {
		c := wire.RAIDSpec{KeepExisting: r.KeepExisting}
		for _, v := range r.HardwareRAIDVolumes {
			v.SizeGibibytes, v.NumberOfPhysicalDisks = cloneInt(v.SizeGibibytes), cloneInt(v.NumberOfPhysicalDisks)
			v.Rotational, v.Level, v.Controller = cloneBool(v.Rotational), in(v.Level), in(v.Controller)
			v.PhysicalDisks = append([]string(nil), v.PhysicalDisks...)
			c.HardwareRAIDVolumes = append(c.HardwareRAIDVolumes, v)
		}
		for _, v := range r.SoftwareRAIDVolumes {
			v.SizeGibibytes, v.Level = cloneInt(v.SizeGibibytes), in(v.Level)
			if v.PhysicalDisks != nil {
				disks := make([]wire.RootDeviceHints, len(v.PhysicalDisks))
				for i := range v.PhysicalDisks {
					disks[i] = *cloneHints(&v.PhysicalDisks[i])
				}
				v.PhysicalDisks = disks
			}
			c.SoftwareRAIDVolumes = append(c.SoftwareRAIDVolumes, v)
		}
		h.RAID = &c
	}
	if p := h.UpdatePolicy; p != nil {
		c := wire.UpdatePolicy{FirmwareSettings: in(p.FirmwareSettings), FirmwareUpdates: in(p.FirmwareUpdates)}
		h.UpdatePolicy = &c
	}
}

func cloneBool(b *bool) *bool {
	if b == nil {
		return nil
	}
	v := *b
	return &v
}

func cloneInt(n *int) *int {
	if n == nil {
		return nil
	}
	v := *n
	return &v
}
