package agent

import (
	"context"
	"fmt"
	"github.com/rackfence/rackfence/shared/client"
	"log/slog"
	"net/http"
	"testing"
	"time"

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
	res, err := r.postNewer(context.Background(), rep)
	if err != nil || res.Hosts[0].Error != nil || res.Hosts[1].Error != nil {
		t.Fatalf("want both written: %+v %v", res, err)
	}
	if len(api.calls) != 2 || len(api.calls[1].Hosts) != 1 || api.calls[1].Hosts[0].Name != "d2" || api.calls[1].Hosts[0].Status.DayTwo != nil {
		t.Fatalf("want d2 alone sent again without dayTwo: %+v", api.calls)
	}
	if st.DayTwo == nil {
		t.Fatal("the agent's own status lost dayTwo")
	}
	res, err = r.postNewer(context.Background(), wire.RackStatusReport{Epoch: 3, Hosts: []wire.RackHostReport{{Name: "d2", Status: st}}})
	if err != nil || res.Hosts[0].Error != nil || len(api.calls) != 3 || api.calls[2].Hosts[0].Status.DayTwo != nil {
		t.Fatalf("want dayTwo left out at once now: %+v %v %+v", res, err, api.calls)
	}
}

// olderDriveAPI answers as a coordinator built before
// status.configDrive.server: knowing no such field, it refuses the whole
// rack report naming it (hosts[i].status.configDrive.server), and a
// per-host report naming status.configDrive.server.
type olderDriveAPI struct {
	calls   []wire.RackStatusReport
	perHost []wire.StatusReport
}

func (o *olderDriveAPI) ReportRackStatus(_ context.Context, _ string, r wire.RackStatusReport) (*wire.RackStatusResult, error) {
	o.calls = append(o.calls, r)
	res := &wire.RackStatusResult{}
	for i, h := range r.Hosts {
		if h.Status != nil && h.Status.ConfigDrive != nil && h.Status.ConfigDrive.Server != "" {
			f := fmt.Sprintf("hosts[%d].status.configDrive.server", i)
			return nil, &client.Error{Status: http.StatusBadRequest, Code: wire.CodeBadRequest, Field: f, Message: "unknown field " + f}
		}
		res.Hosts = append(res.Hosts, wire.RackHostResult{Name: h.Name, ModifiedIndex: uint64(10 + i)})
	}
	return res, nil
}

// A coordinator from before status.configDrive.server refuses the report
// naming it: the agent sends the report again without the server (the
// drive's size and times stay), then leaves it out of every report; its
// own status keeps it.
func TestReporterDropsDriveServerForOlderCoordinator(t *testing.T) {
	api := &olderDriveAPI{}
	r := &reporter{s: &session{a: &Agent{cfg: Config{Rack: "r1"}}, log: slog.Default()}, api: api}
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	st := &wire.HostStatus{ProvisioningState: wire.StateProvisioned,
		ConfigDrive: &wire.ConfigDriveStatus{Server: "http://10.0.0.5:7482", Size: 900, PublishedAt: t0}}
	rep := wire.RackStatusReport{Epoch: 3, Hosts: []wire.RackHostReport{{Name: "plain", Status: &wire.HostStatus{ProvisioningState: wire.StateAvailable}}, {Name: "web", Status: st}}}
	res, err := r.postNewer(context.Background(), rep)
	if err != nil || res.Hosts[0].Error != nil || res.Hosts[1].Error != nil {
		t.Fatalf("want both written: %+v %v", res, err)
	}
	if len(api.calls) != 2 {
		t.Fatalf("want the report sent again once: %+v", api.calls)
	}
	if cd := api.calls[1].Hosts[1].Status.ConfigDrive; cd == nil || cd.Server != "" || cd.Size != 900 || !cd.PublishedAt.Equal(t0) {
		t.Fatalf("want web's config drive again without its server: %+v", cd)
	}
	if st.ConfigDrive.Server == "" {
		t.Fatal("the agent's own status lost the server")
	}
	res, err = r.postNewer(context.Background(), wire.RackStatusReport{Epoch: 3, Hosts: []wire.RackHostReport{{Name: "web", Status: st}}})
	if err != nil || res.Hosts[0].Error != nil || len(api.calls) != 3 || api.calls[2].Hosts[0].Status.ConfigDrive.Server != "" {
		t.Fatalf("want the server left out at once now: %+v %v %+v", res, err, api.calls)
	}
}
