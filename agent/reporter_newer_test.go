package agent

import (
	"context"
	"log/slog"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// olderRackAPI answers as a coordinator built before status.dayTwo: a
// host whose status carries it is refused naming the field; the others
// are written.
type olderRackAPI struct{ calls []wire.RackStatusReport }

func (o *olderRackAPI) ReportRackStatus(_ context.Context, _ string, r wire.RackStatusReport) (*wire.RackStatusResult, error) {
	o.calls = append(o.calls, r)
	res := &wire.RackStatusResult{}
	for i, h := range r.Hosts {
		hr := wire.RackHostResult{Name: h.Name, ModifiedIndex: uint64(10 + i)}
		if h.Status != nil && h.Status.DayTwo != nil {
			hr = wire.RackHostResult{Name: h.Name, Error: &wire.ErrorDetail{Code: wire.CodeBadRequest, Field: "status.dayTwo",
				Message: "status.dayTwo: is not accepted yet: this coordinator does not store day-two status; leave it out"}}
		}
		res.Hosts = append(res.Hosts, hr)
	}
	return res, nil
}

// A coordinator from before status.dayTwo refuses it per host: the agent
// sends those hosts again without it (the others are not sent twice), then
// leaves it out of every report; its own status keeps it.
func TestReporterDropsDayTwoForOlderCoordinator(t *testing.T) {
	api := &olderRackAPI{}
	r := &reporter{s: &session{a: &Agent{cfg: Config{Rack: "r1"}}, log: slog.Default()}, api: api}
	st := &wire.HostStatus{ProvisioningState: wire.StateAvailable, DayTwo: &wire.DayTwoStatus{Firmware: []wire.FirmwareStatus{{Component: "BMC", Version: "2"}}}}
	rep := wire.RackStatusReport{Epoch: 3, Hosts: []wire.RackHostReport{{Name: "plain", Status: &wire.HostStatus{ProvisioningState: wire.StateAvailable}}, {Name: "d2", Status: st}}}
	res, err := r.postDayTwo(context.Background(), rep)
	if err != nil || res.Hosts[0].Error != nil || res.Hosts[1].Error != nil {
		t.Fatalf("want both written: %+v %v", res, err)
	}
	if len(api.calls) != 2 || len(api.calls[1].Hosts) != 1 || api.calls[1].Hosts[0].Name != "d2" || api.calls[1].Hosts[0].Status.DayTwo != nil {
		t.Fatalf("want d2 alone sent again without dayTwo: %+v", api.calls)
	}
	if st.DayTwo == nil {
		t.Fatal("the agent's own status lost dayTwo")
	}
	res, err = r.postDayTwo(context.Background(), wire.RackStatusReport{Epoch: 3, Hosts: []wire.RackHostReport{{Name: "d2", Status: st}}})
	if err != nil || res.Hosts[0].Error != nil || len(api.calls) != 3 || api.calls[2].Hosts[0].Status.DayTwo != nil {
		t.Fatalf("want dayTwo left out at once now: %+v %v %+v", res, err, api.calls)
	}
}
