package agent

import (
	"net/http"
	"strings"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// A status carries the host's hardware health (wire.HostStatus.Health). A
// coordinator built before that field refuses the whole report as naming
// an unknown field (400, field status.health, or hosts[i].status.health
// per rack); the agent then sends it again without the health and leaves
// it out for legacyRetry, as it does with a rack report's createdIndex.

// noHealth reports whether health is left out of reports now.
func (a *Agent) noHealth() bool { return time.Now().UnixNano() < a.noHealthUntil.Load() }

// healthRefused checks err: when it refuses a status' health as an unknown
// field, health is left out for legacyRetry and true is returned (send
// again without it).
func (s *session) healthRefused(err error) bool {
	e, ok := client.AsError(err)
	if !ok || e.Status != http.StatusBadRequest || !(e.Field == "status.health" ||
		(strings.HasPrefix(e.Field, "hosts[") && strings.HasSuffix(e.Field, "].status.health"))) {
		return false
	}
	s.a.noHealthUntil.Store(time.Now().Add(legacyRetry).UnixNano())
	s.log.Info("the coordinator does not know a status' hardware health; sending statuses without it", "retryIn", legacyRetry, "err", err.Error())
	return true
}

// withoutHealth is st without its health (a copy; st is not changed).
func withoutHealth(st *wire.HostStatus) *wire.HostStatus {
	if st == nil || st.Health == nil {
		return st
	}
	cp := *st
	cp.Health = nil
	return &cp
}

// dropHealth leaves every host's health out of rep (whose Hosts are the
// reporter's own copy; the statuses are copied) and reports whether one
// was set.
func dropHealth(rep *wire.RackStatusReport) bool {
	set := false
	for i := range rep.Hosts {
		if st := rep.Hosts[i].Status; st != nil && st.Health != nil {
			set = true
			rep.Hosts[i].Status = withoutHealth(st)
		}
	}
	return set
}
