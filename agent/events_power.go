package agent

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// The power poll (with Config.EventsURL, or Config.PowerPoll set): a
// registered host's power is read from its BMC every PowerPoll (jittered),
// EventsSlowdown times less often while its events are live, and at once
// after an event. The read goes into the host's status before the state
// machine looks at it, so a host found off that should be on is powered on
// in the same reconcile, as after any outcome.

// powerPace is the poll's period for name now (0: no poll).
func (s *session) powerPace(live bool) time.Duration {
	p := s.a.cfg.PowerPoll
	if p <= 0 {
		return 0
	}
	if live {
		p *= time.Duration(s.a.cfg.EventsSlowdown)
	}
	return p
}

// pollPower reads name's power when an event asked for it or the poll is
// due, and puts it in the entry's status.
func (s *session) pollPower(name string) {
	if s.a.cfg.PowerPoll <= 0 {
		return
	}
	var h wire.Host
	var st *wire.HostStatus
	cur := s.store.entry(name, func(e *hostEntry) { h, st = e.host, e.status })
	if cur == nil || st == nil || st.BMCDetails == nil || h.DeletionRequested || st.OperationalStatus == wire.OpDetached ||
		st.ProvisioningState == wire.StateRegistering {
		return
	}
	now := time.Now()
	cause := ""
	var next time.Duration
	s.events.with(name, func(e *eventHost) {
		live := e.armed && e.confirmed && e.reason == ""
		pace := s.powerPace(live)
		switch {
		case e.powerDue:
			cause = "event"
		case e.powerAt.IsZero():
			// A new session: spread the first reads over one period.
			e.powerAt = now.Add(time.Duration(float64(pace) * rand.Float64()))
		case !now.Before(e.powerAt):
			cause = "poll"
		}
		if cause != "" {
			e.powerDue = false
			e.powerAt = now.Add(jitter(pace, 0.2))
		}
		next = time.Until(e.powerAt)
	})
	s.queue.addAfter(name, max(time.Second, next))
	if cause == "" {
		return
	}
	if _, ok := s.a.cfg.Holder.Valid(0); !ok {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.a.cfg.ActionTimeout)
	defer cancel()
	ph, err := s.provHost(ctx, h)
	if err != nil {
		s.a.cfg.Metrics.events.powerReads.WithLabelValues(cause, "error").Inc()
		return
	}
	res, err := s.a.cfg.Provisioner.PowerState(ctx, ph)
	if err != nil {
		s.a.cfg.Metrics.events.powerReads.WithLabelValues(cause, "error").Inc()
		s.log.Debug("power not read", "host", name, "cause", cause, "err", err.Error())
		return
	}
	s.a.cfg.Metrics.events.powerReads.WithLabelValues(cause, "ok").Inc()
	if res.PoweredOn == nil {
		return // the BMC reports no power state: the status keeps what was asked
	}
	on := *res.PoweredOn
	ps := wire.PowerOff
	if on {
		ps = wire.PowerOn
	}
	s.store.withEntry(name, cur, func(e *hostEntry) {
		if e.status == nil || (e.status.PoweredOn == on && e.status.PowerState == ps) {
			return
		}
		s.log.Info("power changed at the BMC", "host", name, "poweredOn", on, "was", e.status.PoweredOn, "cause", cause)
		cp := *e.status
		cp.PoweredOn, cp.PowerState = on, ps
		e.status = &cp
	})
}
