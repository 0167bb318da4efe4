package agent

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// A status carries dayTwo (the BIOS values, firmware inventory, volumes
// and last erase the agent found). A coordinator built before it refuses
// a host's status naming the field status.dayTwo (or, knowing no such
// field, the whole rack report naming hosts[i].status.dayTwo); the agent
// then sends it again without it and leaves it out of every status for
// legacyRetry. (A coordinator that knows the field but whose voters do
// not all apply it yet stores the status without it: nothing to do here.)

// postDayTwo is post, with dayTwo left out where the coordinator refuses it.
func (r *reporter) postDayTwo(ctx context.Context, rep wire.RackStatusReport) (*wire.RackStatusResult, error) {
	until := &r.s.a.noDayTwoUntil
	if time.Now().UnixNano() < until.Load() {
		for i := range rep.Hosts {
			rep.Hosts[i].Status = withoutDayTwo(rep.Hosts[i].Status)
		}
	}
	res, err := r.post(ctx, rep)
	if err != nil && refusesDayTwo(err) {
		// A coordinator that does not know the field at all refuses the
		// whole report naming it (hosts[i].status.dayTwo).
		until.Store(time.Now().Add(legacyRetry).UnixNano())
		r.s.log.Info("the coordinator does not know status.dayTwo; sending statuses without it", "retryIn", legacyRetry, "err", err.Error())
		for i := range rep.Hosts {
			rep.Hosts[i].Status = withoutDayTwo(rep.Hosts[i].Status)
		}
		return r.post(ctx, rep)
	}
	if err != nil || res == nil || len(res.Hosts) != len(rep.Hosts) {
		return res, err
	}
	var again []int
	for i, h := range res.Hosts {
		if h.Error != nil && strings.HasSuffix(h.Error.Field, "status.dayTwo") && rep.Hosts[i].Status != nil && rep.Hosts[i].Status.DayTwo != nil {
			again = append(again, i)
		}
	}
	if len(again) == 0 {
		return res, nil
	}
	until.Store(time.Now().Add(legacyRetry).UnixNano())
	r.s.log.Info("the coordinator does not take status.dayTwo; sending statuses without it", "retryIn", legacyRetry, "err", res.Hosts[again[0]].Error.Message)
	sub := wire.RackStatusReport{Epoch: rep.Epoch}
	for _, i := range again {
		h := rep.Hosts[i]
		h.Status = withoutDayTwo(h.Status)
		sub.Hosts = append(sub.Hosts, h)
	}
	res2, err := r.post(ctx, sub)
	if err != nil || len(res2.Hosts) != len(again) {
		return res, nil // those hosts stay refused; their next write leaves dayTwo out
	}
	for k, i := range again {
		res.Hosts[i] = res2.Hosts[k]
	}
	return res, nil
}

// reportPerHost is a per-host status write, again without dayTwo when the
// coordinator refuses it.
func (s *session) reportPerHost(ctx context.Context, name string, rep wire.StatusReport) error {
	until := &s.a.noDayTwoUntil
	if time.Now().UnixNano() < until.Load() {
		rep.Status.DayTwo = nil
	}
	err := s.a.cfg.Client.ReportStatus(ctx, name, rep)
	if err == nil || rep.Status.DayTwo == nil || !refusesDayTwo(err) {
		return err
	}
	until.Store(time.Now().Add(legacyRetry).UnixNano())
	s.log.Info("the coordinator does not take status.dayTwo; sending statuses without it", "retryIn", legacyRetry, "err", err.Error())
	rep.Status.DayTwo = nil
	return s.a.cfg.Client.ReportStatus(ctx, name, rep)
}

func refusesDayTwo(err error) bool {
	e, ok := client.AsError(err)
	return ok && e.Status == http.StatusBadRequest && strings.HasSuffix(e.Field, "status.dayTwo")
}

// withoutDayTwo is st without dayTwo (a copy when it had one).
func withoutDayTwo(st *wire.HostStatus) *wire.HostStatus {
	if st == nil || st.DayTwo == nil {
		return st
	}
	c := *st
	c.DayTwo = nil
	return &c
}
