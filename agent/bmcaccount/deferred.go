package bmcaccount

import (
	"math/rand/v2"
	"time"
)

// A coordinator that cannot record a pending password yet (the version
// gate of a cluster formed moments ago, whose leader has not recorded
// every member's version; a voter not upgraded; a coordinator without
// the route) leaves the host on the operator's credentials for now,
// without a change at the BMC, and the rotation is tried again after a
// backoff (deferMin doubling up to deferMax, jittered so a rack's hosts
// do not retry together): the fence at the BMC turns on once the
// coordinator takes the record, under the same lease.
const (
	deferMin = 2 * time.Second
	deferMax = time.Minute
)

// notYetError: the coordinator refused the pending password for a reason
// that passes (an upgrade, a member's version recorded); why is what the
// host's credentials say meanwhile.
type notYetError struct{ why string }

func (e *notYetError) Error() string { return e.why }

// deferDelay is the wait before the n-th retry (n ≥ 1) of a deferred
// rotation: a random duration in [d/2, d], d = deferMin·2^(n−1) up to
// deferMax.
func deferDelay(n int) time.Duration {
	d := deferMin
	for i := 1; i < n && d < deferMax; i++ {
		d *= 2
	}
	d = min(d, deferMax)
	return d - time.Duration(rand.Float64()*0.5*float64(d))
}

// deferHost records host h's rotation under epoch as deferred (the
// operator's credentials are used until retryAt) and logs the first
// deferral of each epoch once for the whole agent. h.mu held.
func (m *Manager) deferHost(h *hostAcct, host string, epoch uint64, why string) {
	if h.epoch != epoch {
		h.deferrals = 0
	}
	h.deferrals++
	wait := deferDelay(h.deferrals)
	now := m.cfg.Now()
	h.epoch, h.user, h.pw, h.off, h.at, h.retryAt = epoch, "", "", why, now, now.Add(wait)
	m.mu.Lock()
	first := m.deferLogged != epoch
	m.deferLogged = epoch
	m.mu.Unlock()
	if first {
		m.cfg.Logger.Warn("the coordinator cannot record BMC accounts yet: the fence at the BMC stays off for each host "+
			"until it can (the operator's credentials are used meanwhile, nothing is changed at the BMC); retried per host",
			"host", host, "epoch", epoch, "reason", why, "retryIn", wait)
	} else {
		m.cfg.Logger.Debug("BMC account rotation deferred", "host", host, "epoch", epoch, "attempt", h.deferrals, "retryIn", wait)
	}
}

// RetryIn reports when host's deferred rotation is due (ok false: none
// deferred, or a rotation runs), so its next look is scheduled then.
func (m *Manager) RetryIn(host string) (wait time.Duration, ok bool) {
	m.mu.Lock()
	h := m.m[host]
	m.mu.Unlock()
	if h == nil || !h.mu.TryLock() {
		return 0, false
	}
	defer h.mu.Unlock()
	if h.retryAt.IsZero() {
		return 0, false
	}
	return max(h.retryAt.Sub(m.cfg.Now()), 0), true
}
