package fsm

import (
	"bytes"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestDayTwoStatusBodyVersions: a report whose status carries dayTwo is
// written as StatusDayTwoVersion (per host) or RackStatusDayTwoVersion
// (rack), which decode with it; the same report without it is the
// version every older binary applies, byte for byte; an older body that
// carries it (no leader writes one) decodes without it.
func TestDayTwoStatusBodyVersions(t *testing.T) {
	d2 := &wire.DayTwoStatus{Firmware: []wire.FirmwareStatus{{Component: "BMC", Version: "3.10"}}}
	st := wire.HostStatus{ProvisioningState: wire.StateAvailable, DayTwo: d2}
	per := StatusCmd{Rack: "r1", Name: "h1", Time: t0, Report: wire.StatusReport{Epoch: 3, Status: st}}
	b, err := Encode(per)
	if err != nil {
		t.Fatal(err)
	}
	if b[1] != StatusDayTwoVersion || commandVersions[CmdStatus] < StatusDayTwoVersion {
		t.Fatalf("per-host report with dayTwo: version %d, table %d", b[1], commandVersions[CmdStatus])
	}
	got, err := Decode(b)
	if err != nil || got.(StatusCmd).Report.Status.DayTwo == nil || got.(StatusCmd).Report.Status.DayTwo.Firmware[0].Version != "3.10" {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	w := per.WithoutDayTwo()
	if per.Report.Status.DayTwo == nil {
		t.Fatalf("WithoutDayTwo changed its receiver")
	}
	wb, _ := Encode(w)
	if wb[1] != BodyBinary || bytes.Contains(wb, []byte("dayTwo")) {
		t.Fatalf("without dayTwo: version %d body %q", wb[1], wb)
	}
	// A v2 body carrying it decodes without it.
	old := append([]byte{b[0], BodyBinary}, b[2:]...)
	if got, err := Decode(old); err != nil || got.(StatusCmd).Report.Status.DayTwo != nil {
		t.Fatalf("v2 body with dayTwo decoded as %+v, %v", got, err)
	}

	rack := RackStatusCmd{Rack: "r1", Epoch: 3, Time: t0, Hosts: []wire.RackHostReport{{Name: "h1", Created: 5, Status: &st}, {Name: "h2", Touch: 2}}}
	rb, err := Encode(rack)
	if err != nil {
		t.Fatal(err)
	}
	if rb[1] != RackStatusDayTwoVersion || commandVersions[CmdRackStatus] < RackStatusDayTwoVersion {
		t.Fatalf("rack report with dayTwo: version %d, table %d", rb[1], commandVersions[CmdRackStatus])
	}
	rg, err := Decode(rb)
	if err != nil || rg.(RackStatusCmd).Hosts[0].Status.DayTwo == nil || rg.(RackStatusCmd).Hosts[0].Created != 5 {
		t.Fatalf("decoded %+v, %v", rg, err)
	}
	rw := rack.WithoutDayTwo()
	if rack.Hosts[0].Status.DayTwo == nil || rw.hasDayTwo() || !rw.CreatedChecked() {
		t.Fatalf("WithoutDayTwo: receiver %+v, result %+v", rack.Hosts[0].Status, rw.Hosts[0].Status)
	}
	if b, _ := Encode(rw); b[1] != RackStatusCreatedVersion {
		t.Fatalf("without dayTwo but with created: version %d", b[1])
	}
	old3 := append([]byte{rb[0], RackStatusCreatedVersion}, rb[2:]...)
	if got, err := Decode(old3); err != nil || got.(RackStatusCmd).hasDayTwo() || got.(RackStatusCmd).Hosts[0].Created != 5 {
		t.Fatalf("v3 body with dayTwo decoded as %+v, %v", got, err)
	}
	// With hardware health too: v4 keeps both; a v3 body keeps health only.
	both := per
	both.Report.Status.Health = &wire.HardwareHealth{Health: wire.HardwareCritical, Since: t0}
	bb, _ := Encode(both)
	if bb[1] != StatusDayTwoVersion || StatusDayTwoVersion <= StatusHealthVersion || RackStatusDayTwoVersion <= RackStatusHealthVersion {
		t.Fatalf("status with health and dayTwo: version %d", bb[1])
	}
	v3 := append([]byte{bb[0], StatusHealthVersion}, bb[2:]...)
	if got, err := Decode(v3); err != nil || got.(StatusCmd).Report.Status.DayTwo != nil || got.(StatusCmd).Report.Status.Health == nil {
		t.Fatalf("v3 body with both decoded as %+v, %v", got, err)
	}
}
