package agent

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// A status carries fields a coordinator built before them does not know
// (newerFields: the hardware health, the day-two status, the config
// drive's server). Such a coordinator refuses a host's status naming the
// field (status.dayTwo), or, decoding the whole rack report, the report
// naming hosts[i].status.dayTwo; the agent then sends it again without
// the field and leaves it out of every status for legacyRetry. (A
// coordinator that knows a field but whose voters do not all apply it
// yet stores the status without it: nothing to do here.)

// newerField is one status field an older coordinator refuses.
type newerField struct {
	// path is the field's path in a host status report (status.dayTwo);
	// a refusal naming it, or hosts[i].<path>, is one of the field.
	path string
	// until (unix ns): the field is left out until then.
	until func(a *Agent) *atomic.Int64
	// has reports whether st carries the field; without is st without it
	// (a copy: st is not changed).
	has     func(st *wire.HostStatus) bool
	without func(st *wire.HostStatus) *wire.HostStatus
}

var newerFields = []newerField{
	{path: "status.health", until: func(a *Agent) *atomic.Int64 { return &a.noHealthUntil },
		has: func(st *wire.HostStatus) bool { return st.Health != nil },
		without: func(st *wire.HostStatus) *wire.HostStatus {
			c := *st
			c.Health = nil
			return &c
		}},
	{path: "status.dayTwo", until: func(a *Agent) *atomic.Int64 { return &a.noDayTwoUntil },
		has: func(st *wire.HostStatus) bool { return st.DayTwo != nil },
		without: func(st *wire.HostStatus) *wire.HostStatus {
			c := *st
			c.DayTwo = nil
			return &c
		}},
	{path: "status.configDrive.server", until: func(a *Agent) *atomic.Int64 { return &a.noDriveServerUntil },
		has: func(st *wire.HostStatus) bool { return st.ConfigDrive != nil && st.ConfigDrive.Server != "" },
		without: func(st *wire.HostStatus) *wire.HostStatus {
			c, cd := *st, *st.ConfigDrive
			cd.Server = ""
			c.ConfigDrive = &cd
			return &c
		}},
}

// strip is st without f (st itself when it does not carry it).
func (f *newerField) strip(st *wire.HostStatus) *wire.HostStatus {
	if st == nil || !f.has(st) {
		return st
	}
	return f.without(st)
}

// leftOut reports whether f is left out of statuses now.
func (f *newerField) leftOut(a *Agent) bool { return time.Now().UnixNano() < f.until(a).Load() }

// refusedField returns the newer field err (or a host's error field) refuses,
// nil for any other error.
func refusedField(err error) *newerField {
	e, ok := client.AsError(err)
	if !ok || e.Status != http.StatusBadRequest {
		return nil
	}
	return fieldNamed(e.Field)
}

func fieldNamed(name string) *newerField {
	for i := range newerFields {
		if strings.HasSuffix(name, newerFields[i].path) {
			return &newerFields[i]
		}
	}
	return nil
}

// leaveOut leaves f out of statuses for legacyRetry.
func (a *Agent) leaveOut(f *newerField, log *slog.Logger, msg string) {
	f.until(a).Store(time.Now().Add(legacyRetry).UnixNano())
	log.Info("the coordinator does not take "+f.path+"; sending statuses without it", "retryIn", legacyRetry, "err", msg)
}

// postNewer is post, with each newer field left out where the
// coordinator refuses it.
func (r *reporter) postNewer(ctx context.Context, rep wire.RackStatusReport) (*wire.RackStatusResult, error) {
	a := r.s.a
	for i := range newerFields {
		if f := &newerFields[i]; f.leftOut(a) {
			for k := range rep.Hosts {
				rep.Hosts[k].Status = f.strip(rep.Hosts[k].Status)
			}
		}
	}
	res, err := r.post(ctx, rep)
	// A coordinator that does not know a field at all refuses the whole
	// report naming it (hosts[i].status.dayTwo), one field at a time.
	for tries := 0; err != nil && tries < len(newerFields); tries++ {
		f := refusedField(err)
		if f == nil {
			break
		}
		a.leaveOut(f, r.s.log, err.Error())
		for k := range rep.Hosts {
			rep.Hosts[k].Status = f.strip(rep.Hosts[k].Status)
		}
		res, err = r.post(ctx, rep)
	}
	if err != nil || res == nil || len(res.Hosts) != len(rep.Hosts) {
		return res, err
	}
	var again []int
	for i, h := range res.Hosts {
		if h.Error == nil || rep.Hosts[i].Status == nil {
			continue
		}
		if f := fieldNamed(h.Error.Field); f != nil && f.has(rep.Hosts[i].Status) {
			if !f.leftOut(a) {
				a.leaveOut(f, r.s.log, h.Error.Message)
			}
			again = append(again, i)
		}
	}
	if len(again) == 0 {
		return res, nil
	}
	sub := wire.RackStatusReport{Epoch: rep.Epoch}
	for _, i := range again {
		h := rep.Hosts[i]
		for k := range newerFields {
			if f := &newerFields[k]; f.leftOut(a) {
				h.Status = f.strip(h.Status)
			}
		}
		sub.Hosts = append(sub.Hosts, h)
	}
	res2, err := r.post(ctx, sub)
	if err != nil || len(res2.Hosts) != len(again) {
		return res, nil // those hosts stay refused; their next write leaves the fields out
	}
	for k, i := range again {
		res.Hosts[i] = res2.Hosts[k]
	}
	return res, nil
}

// reportPerHost is a per-host status write, again without a newer field
// the coordinator refuses.
func (s *session) reportPerHost(ctx context.Context, name string, rep wire.StatusReport) error {
	st := &rep.Status
	for i := range newerFields {
		if f := &newerFields[i]; f.leftOut(s.a) {
			st = f.strip(st)
		}
	}
	rep.Status = *st
	err := s.a.cfg.Client.ReportStatus(ctx, name, rep)
	for tries := 0; err != nil && tries < len(newerFields); tries++ {
		f := refusedField(err)
		if f == nil || !f.has(&rep.Status) {
			break
		}
		s.a.leaveOut(f, s.log, err.Error())
		rep.Status = *f.without(&rep.Status)
		err = s.a.cfg.Client.ReportStatus(ctx, name, rep)
	}
	return err
}
