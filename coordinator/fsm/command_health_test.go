package fsm

import (
	"bytes"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// A status carrying hardware health is CmdStatus v3 / CmdRackStatus v4 and
// decodes with it; without health the body is byte for byte what it was
// (v2, or v3 naming createdIndexes), so older binaries apply it;
// WithoutHealth is that form; an older body never carries health.
func TestHealthBodyVersions(t *testing.T) {
	hh := &wire.HardwareHealth{Health: wire.HardwareCritical, Components: map[string]string{wire.HealthPowerSupply: wire.HardwareCritical},
		Problems: []string{"power supply PSU 1: Critical"}, Since: t0}
	with := wire.HostStatus{ProvisioningState: wire.StateAvailable, Health: hh}
	plain := wire.HostStatus{ProvisioningState: wire.StateAvailable}

	sc := StatusCmd{Rack: "r1", Name: "h1", Report: wire.StatusReport{Epoch: 2, Status: with}, Time: t0}
	b, err := Encode(sc)
	if err != nil || b[1] != StatusHealthVersion || commandVersions[CmdStatus] < StatusHealthVersion {
		t.Fatalf("status with health: version %d (table %d), %v", b[1], commandVersions[CmdStatus], err)
	}
	got, err := Decode(b)
	if err != nil || got.(StatusCmd).Report.Status.Health == nil || got.(StatusCmd).Report.Status.Health.Problems[0] != hh.Problems[0] {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	pb, _ := Encode(StatusCmd{Rack: "r1", Name: "h1", Report: wire.StatusReport{Epoch: 2, Status: plain}, Time: t0})
	wb, _ := Encode(sc.WithoutHealth())
	if pb[1] != BodyBinary || !bytes.Equal(wb, pb) || bytes.Contains(pb, []byte("health")) || sc.Report.Status.Health == nil {
		t.Fatalf("without health: version %d, %q; want the plain body %q (receiver kept)", wb[1], wb, pb)
	}
	old := bytes.Clone(b)
	old[1] = BodyBinary
	if got, err := Decode(old); err != nil || got.(StatusCmd).Report.Status.Health != nil {
		t.Fatalf("a v2 body with health decoded as %+v, %v", got, err)
	}

	rc := RackStatusCmd{Rack: "r1", Epoch: 2, Time: t0, Hosts: []wire.RackHostReport{{Name: "h1", Created: 5, Status: &with}, {Name: "h2", Touch: 3}}}
	rb, err := Encode(rc)
	if err != nil || rb[1] != RackStatusHealthVersion || commandVersions[CmdRackStatus] < RackStatusHealthVersion {
		t.Fatalf("rack report with health: version %d, %v", rb[1], err)
	}
	if got, err := Decode(rb); err != nil || got.(RackStatusCmd).Hosts[0].Status.Health == nil || got.(RackStatusCmd).Hosts[0].Created != 5 {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	w := rc.WithoutHealth()
	if rc.Hosts[0].Status.Health == nil || w.hasHealth() || !w.CreatedChecked() {
		t.Fatalf("WithoutHealth: receiver %+v, result %+v", rc.Hosts[0], w.Hosts[0])
	}
	if wb, _ := Encode(w); wb[1] != RackStatusCreatedVersion {
		t.Fatalf("without health, naming createdIndex: version %d", wb[1])
	}
	old = bytes.Clone(rb)
	old[1] = RackStatusCreatedVersion
	if got, err := Decode(old); err != nil || got.(RackStatusCmd).hasHealth() || got.(RackStatusCmd).Hosts[0].Created != 5 {
		t.Fatalf("a v3 body with health decoded as %+v, %v", got, err)
	}
	_ = time.Second
}
