package agent

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/rackfence/rackfence/agent/hoststate"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// maxStepsPerReconcile bounds the Step → action → Step chain one worker
// runs for one host before putting it back in the queue, so one host
// cannot hold a worker for ever.
const maxStepsPerReconcile = 16

// reconcile runs the host's state machine: Step, write the status if it
// changed, run the action, Step again with its outcome, until the state
// machine asks for nothing more (or only later).
func (s *session) reconcile(name string) {
	result := "ok"
	defer func() { s.a.cfg.Metrics.reconciles.WithLabelValues(result).Inc() }()
	inProgress := false
	s.pollPower(name)
	for step := 0; step < maxStepsPerReconcile; step++ {
		if s.ctx.Err() != nil {
			result = "cancelled"
			return
		}
		var (
			h    wire.Host
			st   *wire.HostStatus
			last *hoststate.Outcome
		)
		// cur is this host's entry: a host deleted and created again under
		// the same name meanwhile has another, which this loop leaves alone.
		cur := s.store.entry(name, func(e *hostEntry) {
			h, st, last = e.host, e.status, e.last
			e.last = nil
		})
		if cur == nil {
			// Deleted on the coordinator (or removed by us): forget it.
			s.a.cfg.Guard.Unblock(name)
			s.queue.forget(name)
			result = "gone"
			return
		}
		h.Status = st
		d := hoststate.Step(hoststate.Input{Host: h, Now: time.Now(), Jitter: rand.Float64(),
			Last: last, Config: s.a.cfg.StateMachine})
		var before *wire.OperationHistory
		if st != nil {
			before = st.OperationHistory
		}
		s.a.cfg.Metrics.observeOperations(before, d.Status.OperationHistory)
		for _, ev := range d.Events {
			if ev.Reason == hoststate.ReasonSoftPowerOffTimedOut {
				s.a.cfg.Metrics.softFallbacks.Inc()
			}
		}

		s.disarmBeforeBlock(name, h, &d)
		// A blocked host is blocked before any ack goes out: Block returns
		// once the last in-flight mutation of the host has finished, and
		// the guard refuses every further one.
		if d.Blocked {
			if !s.a.cfg.Guard.Blocked(name) {
				s.disableTierAccount(h)
			}
			s.a.cfg.Guard.Block(name)
		} else if s.a.cfg.Guard.Blocked(name) {
			s.a.cfg.Guard.Unblock(name)
		}

		s.readHealth(name, cur, h, &d)
		s.tendEvents(name, h, &d)
		err := s.report(name, cur, &d)
		switch {
		case err == nil:
		case errors.Is(err, ErrLeaseLost):
			s.log.Warn("status write refused: this agent's epoch is stale; dropping all host state", "host", name, "err", err.Error())
			s.fenced(err)
			result = "fenced"
			return
		case errors.Is(err, errHostGone):
			s.store.removeEntry(name, cur)
			s.a.cfg.Guard.Unblock(name)
			result = "gone"
			return
		default:
			// The status is kept and written with the next attempt; no
			// action runs before the coordinator knows what we do.
			var n int
			s.store.withEntry(name, cur, func(e *hostEntry) { e.writeFailures++; n = e.writeFailures })
			wait := statusWriteBackoff.delay(n)
			s.log.Warn("status write failed; retrying", "host", name, "err", err.Error(), "retryIn", wait)
			s.queue.addAfter(name, wait)
			result = "write-error"
			return
		}
		if d.Remove {
			s.store.removeEntry(name, cur)
			s.a.cfg.Guard.Unblock(name)
			s.queue.forget(name)
			result = "removed"
			return
		}
		if !d.Blocked {
			s.rotateOnTakeover(h)
		}
		if d.Action == hoststate.ActionNone || s.stopping.Load() ||
			(inProgress && last != nil && last.Action == d.Action) {
			s.requeue(name, d.RequeueAfter)
			return
		}
		out := s.runAction(name, h, &d.Status, d.Action)
		inProgress = out.InProgress
		s.store.withEntry(name, cur, func(e *hostEntry) { e.last = &out })
		if out.Err == hoststate.ErrClassFenced {
			if _, ok := s.a.cfg.Holder.Valid(0); !ok {
				result = "fenced"
				return
			}
		}
	}
	s.queue.add(name)
}

// requeue schedules the next look at name: when the state machine asked,
// and at the latest when the status is due for its periodic refresh or
// the hardware health for its next read, whichever comes first.
// (A new session has refreshAt zero: every host is stamped once with the
// new epoch, by a touch when its status is the coordinator's copy
// unchanged (hostEntry.adopted), else by a full write.)
func (s *session) requeue(name string, after time.Duration) {
	var due, healthAt time.Time
	touched := false
	s.store.with(name, func(e *hostEntry) { due, touched, healthAt = e.refreshAt, e.base != 0, e.healthAt })
	refresh := time.Until(due)
	if touched && s.reporter.active() {
		// The reporter refreshes the status with a touch: look again at
		// the refresh period, not at every second until it did.
		refresh = s.a.cfg.StatusRefresh
	}
	// A health read due before that (HealthInterval shorter than the
	// refresh). One already past is a host readHealth skips (detached,
	// no Redfish BMC): it must not wake the host every second.
	if h := time.Until(healthAt); h > 0 && h < refresh {
		refresh = h
	}
	if refresh < time.Second {
		refresh = time.Second
	}
	if after <= 0 || after > refresh {
		after = refresh
	}
	s.queue.addAfter(name, after)
}

// errHostGone: the coordinator no longer has the host (404 on write), or
// the watch brought its deletion (or a new host of the same name) while
// it was being reconciled.
var errHostGone = errors.New("host is gone from the coordinator")

// report writes the decision's status, acks, events and removal, stamped
// with the session's epoch: only when the status changed (LastUpdated and
// Epoch aside), when something else must go out, or when the periodic
// refresh is due. cur is the entry the decision was made for: when the
// watch removed it or replaced it (the host deleted, or deleted and created
// again) nothing is written and the answer is errHostGone.
func (s *session) report(name string, cur *hostEntry, d *hoststate.Decision) error {
	var rep wire.RackHostReport
	need, touch := false, false
	perRack := s.reporter.active()
	ok := s.store.withEntry(name, cur, func(e *hostEntry) {
		st := d.Status
		e.status = &st
		e.pendingAcks = append(e.pendingAcks, d.Acks...)
		e.pendingEvents = append(e.pendingEvents, d.Events...)
		e.pendingRemove = e.pendingRemove || d.Remove
		// Per rack, the reporter refreshes an unchanged status it knows
		// the base of with a touch.
		refresh := !time.Now().Before(e.refreshAt) && !(perRack && e.base != 0)
		need = !sameStatus(e.written, e.status) || len(e.pendingAcks) > 0 ||
			len(e.pendingEvents) > 0 || e.pendingRemove || refresh
		if !need && e.adopted {
			if !perRack {
				// Per host there are no touches: the status goes out
				// in full under this epoch.
				e.adopted, e.base, need = false, 0, true
			} else {
				// A takeover: the coordinator holds this very status
				// (at base) under an earlier epoch; a touch stamps it
				// with ours before any action runs.
				touch = true
				rep = wire.RackHostReport{Name: name, Created: e.host.CreatedIndex, Touch: e.base}
				return
			}
		}
		// The one report of this write, per rack or per host, names the
		// createdIndex of the host the decision was made for; its status
		// carries the epoch it is written under.
		out := st
		out.Epoch = s.lease.Epoch
		rep = wire.RackHostReport{Name: name, Created: e.host.CreatedIndex, Status: &out,
			Acks: e.pendingAcks, Events: e.pendingEvents, Remove: e.pendingRemove}
	})
	if !ok {
		return fmt.Errorf("%w: %s was deleted (or created again) while it was reconciled", errHostGone, name)
	}
	if touch {
		return s.touchAdopted(name, cur, rep, d)
	}
	if !need {
		return nil
	}
	// Never write under a lease this agent cannot vouch for (after a pause
	// the coordinator would refuse it as stale anyway).
	if _, ok := s.a.cfg.Holder.Valid(0); !ok {
		return fmt.Errorf("%w: lease deadline passed before writing the status of %s", ErrLeaseLost, name)
	}
	base, err := s.writeStatus(rep, perRack)
	if err != nil {
		return s.statusWriteError(err)
	}
	s.a.cfg.Metrics.statusWrites.WithLabelValues("ok").Inc()
	s.store.withEntry(name, cur, func(e *hostEntry) {
		if len(rep.Acks) > 0 && !e.changedAt.IsZero() {
			s.a.cfg.Metrics.ackLatency.Observe(time.Since(e.changedAt).Seconds())
		}
		applyAcks(&e.host, rep.Acks, s.lease.Epoch)
		w := *rep.Status
		e.written = &w
		e.base, e.adopted = base, false
		// Refreshes are spread over the last fifth of the period, so
		// hosts written together do not all refresh together.
		e.refreshAt = time.Now().Add(jitter(s.a.cfg.StatusRefresh, 0.2))
		e.pendingAcks, e.pendingEvents, e.pendingRemove = nil, nil, false
		e.writeFailures = 0
	})
	if len(rep.Acks) > 0 {
		s.log.Info("intents acknowledged", "host", name, "acks", ackKinds(rep.Acks), "state", rep.Status.ProvisioningState, "operational", rep.Status.OperationalStatus)
	}
	return nil
}

// statusWriteError counts a failed status write (or touch) and says what
// it means to reconcile: ErrLeaseLost, errHostGone, or the error to retry.
func (s *session) statusWriteError(err error) error {
	switch {
	case client.IsStaleEpoch(err):
		s.a.cfg.Metrics.statusWrites.WithLabelValues("stale").Inc()
		return fmt.Errorf("%w: %v", ErrLeaseLost, err)
	case client.IsNotFound(err):
		s.a.cfg.Metrics.statusWrites.WithLabelValues("gone").Inc()
		return fmt.Errorf("%w: %v", errHostGone, err)
	}
	s.a.cfg.Metrics.statusWrites.WithLabelValues("error").Inc()
	return err
}

// touchAdopted sends the touch report decided for an adopted host (one
// the session has not written yet, its status unchanged from the
// coordinator's copy): accepted, the host carries this epoch and its
// refresh is scheduled as after a write; refused because the host moved
// past the base meanwhile (an intent, a spec or label change), the status
// is written in full at once, as before takeovers touched.
func (s *session) touchAdopted(name string, cur *hostEntry, rep wire.RackHostReport, d *hoststate.Decision) error {
	if _, ok := s.a.cfg.Holder.Valid(0); !ok {
		return fmt.Errorf("%w: lease deadline passed before touching the status of %s", ErrLeaseLost, name)
	}
	res, err := s.reporter.write(s.ctx, rep)
	if err == nil && res.Error != nil {
		err = client.HostError(s.a.cfg.Rack, res)
	}
	switch {
	case err == nil:
		s.a.cfg.Metrics.statusWrites.WithLabelValues("ok").Inc()
		s.store.withEntry(name, cur, func(e *hostEntry) {
			e.adopted, e.writeFailures = false, 0
			e.refreshAt = time.Now().Add(jitter(s.a.cfg.StatusRefresh, 0.2))
		})
		return nil
	case client.IsConflict(err) && !client.IsStaleEpoch(err):
		s.store.withEntry(name, cur, func(e *hostEntry) { e.adopted, e.base, e.written = false, 0, nil })
		return s.report(name, cur, d)
	case errors.Is(err, errNoRackStatus):
		// An older coordinator (the reporter fell back meanwhile):
		// per host, in full.
		s.store.withEntry(name, cur, func(e *hostEntry) { e.adopted, e.base = false, 0 })
		return s.report(name, cur, d)
	}
	return s.statusWriteError(err)
}

// writeStatus writes one host's report: per rack (queued with every other
// write due, one request for all) when the coordinator has the endpoint,
// per host otherwise. It returns the host's modifiedIndex after a per-rack
// write (the base of its touches; 0 per host). A per-rack write names the
// host's createdIndex (h.Created), so a coordinator refuses it if the host
// was deleted and created again while it was in flight; a per-host write
// cannot name it (wire.StatusReport has no such field).
func (s *session) writeStatus(h wire.RackHostReport, perRack bool) (uint64, error) {
	if perRack {
		res, err := s.reporter.write(s.ctx, h)
		switch {
		case errors.Is(err, errNoRackStatus):
			// An older coordinator: this write, and the next ones for a
			// while, go per host.
		case err != nil:
			return 0, err
		case res.Error != nil:
			return 0, client.HostError(s.a.cfg.Rack, res)
		default:
			return res.ModifiedIndex, nil
		}
	}
	select {
	case s.a.writeSlots <- struct{}{}:
	case <-s.ctx.Done():
		return 0, context.Cause(s.ctx)
	}
	ctx, cancel := context.WithTimeout(s.ctx, statusWriteTimeout)
	err := s.reportPerHost(ctx, h.Name, h.PerHost(s.lease.Epoch)) // reporter_newer.go
	cancel()
	<-s.a.writeSlots
	return 0, err
}

// applyAcks records written acks in our copy of the host's intents at once,
// so the next Step sees them before the watch brings them back.
func applyAcks(h *wire.Host, acks []wire.IntentAck, epoch uint64) {
	if h.Intents == nil || len(acks) == 0 {
		return
	}
	in := *h.Intents
	for _, a := range acks {
		var p **wire.Intent
		switch a.Kind {
		case wire.IntentDetach:
			p = &in.Detach
		case wire.IntentDrain:
			p = &in.Drain
		case wire.IntentResume:
			p = &in.Resume
		case wire.IntentReboot:
			p = &in.Reboot
		case wire.IntentInspect:
			p = &in.Inspect
		case wire.IntentService:
			p = &in.Service
		case wire.IntentPowerOff:
			in.PowerOff = ackHold(in.PowerOff, a, epoch)
			continue
		default:
			continue
		}
		if *p == nil || (*p).CreatedIndex != a.CreatedIndex {
			continue
		}
		if a.Drop {
			*p = nil
			continue
		}
		it := **p
		it.Acknowledged, it.AckEpoch = true, epoch
		*p = &it
	}
	h.Intents = &in
}

// ackHold applies a power-off ack to a copy of the holds.
func ackHold(holds map[string]*wire.Intent, a wire.IntentAck, epoch uint64) map[string]*wire.Intent {
	out := make(map[string]*wire.Intent, len(holds))
	for k, it := range holds {
		if it.CreatedIndex == a.CreatedIndex {
			c := *it
			c.Acknowledged, c.AckEpoch = true, epoch
			it = &c
		}
		out[k] = it
	}
	return out
}

func ackKinds(acks []wire.IntentAck) []string {
	out := make([]string, len(acks))
	for i, a := range acks {
		out[i] = a.Kind
	}
	return out
}
