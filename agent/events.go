package agent

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/hoststate"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
)

// Events from the BMC (Config.EventsURL set): the agent subscribes each
// registered Redfish host's BMC to push events to its listener
// (events_listener.go) when it takes the rack, with a secret of its own
// per subscription; an authenticated event makes the next reconcile of
// the host read its power at once (events_power.go). The poll stays the
// source of truth, EventsSlowdown times slower while events are live.
// A subscription is live once an event (or the test event sent after
// arming) arrived and while one arrives within EventsSilence; half-way
// through a silence the agent checks that the BMC still lists the
// subscription (re-arming it when the BMC forgot it, as a BMC reboot
// does) and asks for a test event. A BMC without an EventService, a failed
// subscription or a silent one falls back to polling at the normal pace.
// What the host is at shows in its status (wire.ExtraEvents).

// Defaults of the events settings.
const (
	// DefaultEventsSilence is how long a subscription may go without an
	// event (test events included) before the host falls back to polling.
	DefaultEventsSilence = 10 * time.Minute
	// DefaultEventsSlowdown divides the power poll's pace while events
	// are live.
	DefaultEventsSlowdown = 4
	// eventsUnsupportedRetry is when a BMC without an EventService is
	// asked again (its firmware may be updated).
	eventsUnsupportedRetry = time.Hour
	// eventSecretHeader carries a subscription's secret (HttpHeaders).
	eventSecretHeader = "X-Rackfence-Event-Token"
	// eventsPath prefixes the listener's per-host paths.
	eventsPath = "/events/"
)

// Values of wire.ExtraEvents.
const (
	eventsLive    = "live"
	eventsPolling = "polling"
)

// eventHost is one host's subscription, as this session made it.
type eventHost struct {
	// secret and context are the subscription's; "" before arming.
	secret, context string
	// path is the subscription's resource on the BMC ("" when not armed).
	path  string
	armed bool
	// confirmed: an event arrived since arming.
	confirmed bool
	// reason says why the host is polled ("" when live).
	reason string
	// system is the ComputerSystem ID the host's BMC address names (""
	// when none): events about another system are not the host's.
	system                     string
	armedAt, heard, testAt     time.Time
	checkAt                    time.Time
	testTarget                 string
	retryAt                    time.Time
	lastTS                     time.Time
	seen                       []string // recent EventIds, oldest first
	disarmed                   bool
	powerDue                   bool
	powerAt                    time.Time
	received, rearms, replayed int
}

// maxSeenIDs bounds the EventIds remembered per host for replay checks.
const maxSeenIDs = 128

// eventTracker holds the session's subscriptions.
type eventTracker struct {
	mu    sync.Mutex
	hosts map[string]*eventHost
}

func newEventTracker() *eventTracker { return &eventTracker{hosts: map[string]*eventHost{}} }

// with runs fn on name's record (created when missing).
func (t *eventTracker) with(name string, fn func(e *eventHost)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.hosts[name]
	if e == nil {
		e = &eventHost{}
		t.hosts[name] = e
	}
	fn(e)
}

func (t *eventTracker) forget(name string) {
	t.mu.Lock()
	delete(t.hosts, name)
	t.mu.Unlock()
}

// counts is the subscriptions by state (live, polling), for the gauge.
func (t *eventTracker) counts() map[string]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]int{eventsLive: 0, eventsPolling: 0}
	for _, e := range t.hosts {
		if e.disarmed {
			continue
		}
		if e.reason == "" && e.armed {
			out[eventsLive]++
		} else {
			out[eventsPolling]++
		}
	}
	return out
}

func (a *Agent) eventsOn() bool { return a.cfg.EventsURL != "" }

// eventOwner prefixes the Context of this rack's subscriptions for name.
func (a *Agent) eventOwner(name string) string { return "rackfence " + a.cfg.Rack + " " + name + " " }

// disarmBeforeBlock deletes name's subscription before the guard blocks
// the host (detach, deletion, a pivot's detach): afterwards the guard
// would refuse the call.
func (s *session) disarmBeforeBlock(name string, h wire.Host, d *hoststate.Decision) {
	if !s.a.eventsOn() || !(d.Blocked || d.Remove || h.DeletionRequested) || s.a.cfg.Guard.Blocked(name) {
		return
	}
	sub, ok := s.a.cfg.Provisioner.(provisioner.EventSubscriber)
	st := h.Status
	if !ok || st == nil || st.BMCDetails == nil || st.BMCDetails.Protocol != "redfish" {
		return
	}
	done := false
	s.events.with(name, func(e *eventHost) { done = e.disarmed; e.disarmed = true; e.armed = false })
	if done {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.a.cfg.ActionTimeout)
	defer cancel()
	ph, err := s.provHost(ctx, h)
	if err == nil {
		var n int
		n, err = sub.DisarmEvents(ctx, ph, s.a.eventOwner(name))
		if err == nil {
			s.log.Info("BMC event subscription removed", "host", name, "deleted", n)
			s.a.cfg.Metrics.events.subscribeOps.WithLabelValues("disarm", "ok").Inc()
			return
		}
	}
	s.a.cfg.Metrics.events.subscribeOps.WithLabelValues("disarm", "error").Inc()
	s.log.Warn("BMC event subscription not removed; it may keep posting to this agent, which ignores it", "host", name, "err", err.Error())
}

// tendEvents arms, checks or re-arms name's subscription and puts what
// the host is at in d's status (wire.ExtraEvents).
func (s *session) tendEvents(name string, h wire.Host, d *hoststate.Decision) {
	if !s.a.eventsOn() {
		return
	}
	st := &d.Status
	if d.Remove {
		s.events.forget(name)
		return
	}
	if st.BMCDetails == nil || h.DeletionRequested {
		return
	}
	sub, ok := s.a.cfg.Provisioner.(provisioner.EventSubscriber)
	switch {
	case d.Blocked || st.OperationalStatus == wire.OpDetached:
		setEventsExtra(st, eventsPolling+" (not managed: no subscription)")
		return
	case !ok:
		setEventsExtra(st, eventsPolling+" (the "+s.a.cfg.Provisioner.Name()+" provisioner does not subscribe)")
		return
	case st.BMCDetails.Protocol != "redfish":
		setEventsExtra(st, eventsPolling+" (IPMI has no events)")
		return
	}
	if _, ok := s.a.cfg.Holder.Valid(0); !ok {
		return
	}
	now := time.Now()
	var armed bool
	var heard, testAt, checkAt, retryAt time.Time
	var path, target string
	s.events.with(name, func(e *eventHost) {
		if e.disarmed && !d.Blocked {
			e.disarmed = false // attached again
		}
		e.system = systemOf(h.BMC.Address)
		armed, heard, testAt, checkAt, retryAt, path, target = e.armed, e.heard, e.testAt, e.checkAt, e.retryAt, e.path, e.testTarget
	})
	silence := s.a.cfg.EventsSilence
	switch {
	case !armed && now.Before(retryAt):
	case !armed:
		s.arm(name, h, sub, "arm")
	case now.Sub(heard) >= silence && now.Sub(checkAt) >= silence/2:
		// Silent, the test event included: is the subscription still there?
		s.checkSubscription(name, h, sub, path)
	case now.Sub(heard) >= silence/2 && now.Sub(testAt) >= silence/2:
		// Quiet: a test event (one request) shows the path still works.
		s.testEvent(name, h, sub, target)
	}
	s.events.with(name, func(e *eventHost) {
		armed, heard, testAt, checkAt, retryAt = e.armed, e.heard, e.testAt, e.checkAt, e.retryAt
		switch {
		case !e.armed:
		case now.Sub(e.heard) >= silence:
			e.reason = "silent: no event for " + silence.String()
		case !e.confirmed:
			e.reason = "waiting for the first event"
		default:
			e.reason = ""
		}
		if e.reason == "" {
			setEventsExtra(st, eventsLive)
		} else {
			setEventsExtra(st, eventsPolling+" ("+e.reason+")")
		}
	})
	// Look again when the next test event or check is due.
	next := silence / 2
	if armed {
		due := testAt.Add(silence / 2)
		if heard.After(testAt) {
			due = heard.Add(silence / 2)
		}
		if silentAt := heard.Add(silence); silentAt.After(now) {
			due = minTime(due, silentAt)
		} else {
			due = minTime(due, checkAt.Add(silence/2))
		}
		next = max(time.Second, time.Until(due))
	} else if !retryAt.IsZero() {
		next = max(time.Second, time.Until(retryAt))
	}
	s.queue.addAfter(name, next)
}

// arm subscribes name's BMC (replacing this rack's earlier subscriptions
// for the host) and asks for a test event.
func (s *session) arm(name string, h wire.Host, sub provisioner.EventSubscriber, why string) {
	ctx, cancel := context.WithTimeout(s.ctx, s.a.cfg.ActionTimeout)
	defer cancel()
	var raw [32]byte
	_, _ = crand.Read(raw[:])
	secret := hex.EncodeToString(raw[:])
	owner := s.a.eventOwner(name)
	evCtx := owner + "epoch " + strconv.FormatUint(s.lease.Epoch, 10)
	s.events.with(name, func(e *eventHost) {
		e.secret, e.context, e.armed, e.confirmed, e.path = secret, evCtx, false, false, ""
	})
	ph, err := s.provHost(ctx, h)
	var armed provisioner.EventArmed
	if err == nil {
		armed, err = sub.ArmEvents(ctx, ph, provisioner.EventSubscription{
			Destination: s.a.cfg.EventsURL + eventsPath + url.PathEscape(name),
			Owner:       owner, Context: evCtx, Headers: map[string]string{eventSecretHeader: secret}})
	}
	now := time.Now()
	if err != nil {
		unsupported := errors.Is(err, errclass.ErrUnsupported)
		s.events.with(name, func(e *eventHost) {
			e.secret = ""
			if unsupported {
				e.reason = "no EventService"
				e.retryAt = now.Add(eventsUnsupportedRetry)
			} else {
				e.reason = "subscribing failed"
				e.retryAt = now.Add(s.a.cfg.EventsSilence / 2)
			}
		})
		if unsupported {
			s.a.cfg.Metrics.events.subscribeOps.WithLabelValues(why, "unsupported").Inc()
			s.log.Info("BMC has no event service; polling it", "host", name, "err", err.Error())
		} else {
			s.a.cfg.Metrics.events.subscribeOps.WithLabelValues(why, "error").Inc()
			s.log.Warn("BMC event subscription failed; polling it", "host", name, "err", err.Error(), "retryIn", s.a.cfg.EventsSilence/2)
		}
		return
	}
	s.a.cfg.Metrics.events.subscribeOps.WithLabelValues(why, "ok").Inc()
	s.events.with(name, func(e *eventHost) {
		e.armed, e.path, e.testTarget, e.armedAt, e.heard, e.testAt, e.checkAt, e.reason = true, armed.Path, armed.TestTarget, now, now, now, now, ""
		e.retryAt = time.Time{}
		if why == "rearm" {
			e.rearms++
		}
	})
	s.log.Info("BMC subscribed to push events", "host", name, "subscription", armed.Path, "replaced", armed.Replaced, "why", why)
	if err := sub.SubmitTestEvent(ctx, ph, armed.TestTarget); err != nil && !errors.Is(err, errclass.ErrUnsupported) {
		s.log.Debug("test event not asked for", "host", name, "err", err.Error())
	}
}

// testEvent asks name's BMC for a test event (a quiet subscription).
func (s *session) testEvent(name string, h wire.Host, sub provisioner.EventSubscriber, target string) {
	ctx, cancel := context.WithTimeout(s.ctx, s.a.cfg.ActionTimeout)
	defer cancel()
	s.events.with(name, func(e *eventHost) { e.testAt = time.Now() })
	ph, err := s.provHost(ctx, h)
	if err == nil {
		err = sub.SubmitTestEvent(ctx, ph, target)
	}
	if err != nil {
		s.log.Debug("test event not asked for", "host", name, "err", err.Error())
	}
}

// checkSubscription: a silent subscription the BMC no longer lists (a BMC
// reboot forgets them) is made again; one it lists stays, polled.
func (s *session) checkSubscription(name string, h wire.Host, sub provisioner.EventSubscriber, path string) {
	ctx, cancel := context.WithTimeout(s.ctx, s.a.cfg.ActionTimeout)
	defer cancel()
	s.events.with(name, func(e *eventHost) { e.checkAt, e.testAt = time.Now(), time.Now() })
	ph, err := s.provHost(ctx, h)
	if err != nil {
		return
	}
	listed, err := sub.EventSubscribed(ctx, ph, path)
	switch {
	case err != nil:
		s.log.Debug("subscription not checked", "host", name, "err", err.Error())
	case !listed:
		s.log.Warn("the BMC no longer lists the event subscription (a BMC reboot forgets them): subscribing again", "host", name, "subscription", path)
		s.arm(name, h, sub, "rearm")
	default:
		s.log.Warn("BMC events silent though the BMC lists the subscription; polling it", "host", name, "subscription", path, "silence", s.a.cfg.EventsSilence)
		if err := sub.SubmitTestEvent(ctx, ph, ""); err != nil {
			s.log.Debug("test event not asked for", "host", name, "err", err.Error())
		}
	}
}

// setEventsExtra puts v in st.Extra (st's map is the decision's own).
func setEventsExtra(st *wire.HostStatus, v string) {
	if st.Extra == nil {
		st.Extra = map[string]string{}
	}
	st.Extra[wire.ExtraEvents] = v
}

// provHost is h as the provisioner takes it, with its BMC credentials.
func (s *session) provHost(ctx context.Context, h wire.Host) (provisioner.Host, error) {
	ph := provisioner.Host{Name: h.Name, BMC: h.BMC, BootMACAddress: h.BootMACAddress}
	if h.BMC.Credentials != "" {
		u, p, err := s.a.creds.get(ctx, h.BMC.Credentials)
		if err != nil {
			return ph, err
		}
		ph.Username, ph.Password = u, p
	}
	return ph, nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
