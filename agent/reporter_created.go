package agent

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// A rack report names each host's createdIndex (wire.RackHostReport.Created),
// so the coordinator refuses a write about a host deleted and created
// again under the same name while it was in flight. A coordinator built
// before that field, but with the rack endpoint, refuses the whole report
// as naming an unknown field (400, field hosts[i].created); the reporter
// then sends it again without the field (unchecked, as that coordinator
// would write it) and leaves the field out for legacyRetry. (The last
// release has no rack endpoint at all: its 404 sends writes per host,
// whose body has no such field.)

// post sends rep, and again without createdIndex when the coordinator
// refuses the field.
func (r *reporter) post(ctx context.Context, rep wire.RackStatusReport) (*wire.RackStatusResult, error) {
	until := &r.s.a.rackNoCreatedUntil
	if time.Now().UnixNano() < until.Load() {
		dropCreated(&rep)
	}
	res, err := r.api.ReportRackStatus(ctx, r.s.a.cfg.Rack, rep)
	if err == nil || !unknownCreated(err) || !dropCreated(&rep) {
		return res, err
	}
	until.Store(time.Now().Add(legacyRetry).UnixNano())
	r.s.log.Info("the coordinator does not know a host's createdIndex in rack reports; sending them without it", "retryIn", legacyRetry, "err", err.Error())
	return r.api.ReportRackStatus(ctx, r.s.a.cfg.Rack, rep)
}

// unknownCreated reports whether err refuses a rack report's createdIndex
// as an unknown field.
func unknownCreated(err error) bool {
	e, ok := client.AsError(err)
	return ok && e.Status == http.StatusBadRequest && strings.HasPrefix(e.Field, "hosts[") && strings.HasSuffix(e.Field, "].created")
}

// dropCreated clears every host's createdIndex in rep (whose Hosts are the
// reporter's own copy) and reports whether one was set.
func dropCreated(rep *wire.RackStatusReport) bool {
	set := false
	for i := range rep.Hosts {
		set = set || rep.Hosts[i].Created != 0
		rep.Hosts[i].Created = 0
	}
	return set
}
