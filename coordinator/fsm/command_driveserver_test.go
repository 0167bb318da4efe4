package fsm

import (
	"bytes"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// A status whose config drive names its artifact server is written as
// StatusDriveServerVersion (per host) or RackStatusDriveServerVersion
// (rack); an older body carrying it decodes without it (a binary from
// before would drop it), keeping the drive's size and times and any
// dayTwo of a v4 body.
func TestDriveServerBodyVersions(t *testing.T) {
	st := wire.HostStatus{ProvisioningState: wire.StateProvisioned,
		ConfigDrive: &wire.ConfigDriveStatus{Server: "http://10.0.0.5:7482", Size: 900, PublishedAt: t0},
		DayTwo:      &wire.DayTwoStatus{Firmware: []wire.FirmwareStatus{{Component: "BMC", Version: "3.10"}}}}
	per := StatusCmd{Rack: "r1", Name: "h1", Time: t0, Report: wire.StatusReport{Epoch: 3, Status: st}}
	b, err := Encode(per)
	if err != nil {
		t.Fatal(err)
	}
	if b[1] != StatusDriveServerVersion || commandVersions[CmdStatus] != StatusDriveServerVersion || StatusDriveServerVersion <= StatusDayTwoVersion {
		t.Fatalf("per-host report with the drive's server: version %d, table %d", b[1], commandVersions[CmdStatus])
	}
	if got, err := Decode(b); err != nil || got.(StatusCmd).Report.Status.ConfigDrive.Server != "http://10.0.0.5:7482" {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	w := per.WithoutDriveServer()
	if per.Report.Status.ConfigDrive.Server == "" {
		t.Fatal("WithoutDriveServer changed its receiver")
	}
	if wb, _ := Encode(w); wb[1] != StatusDayTwoVersion || bytes.Contains(wb, []byte("10.0.0.5")) {
		t.Fatalf("without the server: version %d body %q", wb[1], wb)
	}
	v4 := append([]byte{b[0], StatusDayTwoVersion}, b[2:]...)
	got, err := Decode(v4)
	if err != nil {
		t.Fatal(err)
	}
	if cd := got.(StatusCmd).Report.Status.ConfigDrive; cd == nil || cd.Server != "" || cd.Size != 900 || got.(StatusCmd).Report.Status.DayTwo == nil {
		t.Fatalf("v4 body with the server decoded as %+v", got)
	}

	rack := RackStatusCmd{Rack: "r1", Epoch: 3, Time: t0, Hosts: []wire.RackHostReport{{Name: "h1", Created: 5, Status: &st}, {Name: "h2", Touch: 2}}}
	rb, err := Encode(rack)
	if err != nil {
		t.Fatal(err)
	}
	if rb[1] != RackStatusDriveServerVersion || commandVersions[CmdRackStatus] != RackStatusDriveServerVersion || RackStatusDriveServerVersion <= RackStatusDayTwoVersion {
		t.Fatalf("rack report with the drive's server: version %d, table %d", rb[1], commandVersions[CmdRackStatus])
	}
	rw := rack.WithoutDriveServer()
	if rack.Hosts[0].Status.ConfigDrive.Server == "" || rw.hasDriveServer() || !rw.hasDayTwo() || !rw.CreatedChecked() {
		t.Fatalf("WithoutDriveServer: receiver %+v, result %+v", rack.Hosts[0].Status, rw.Hosts[0].Status)
	}
	v5 := append([]byte{rb[0], RackStatusDayTwoVersion}, rb[2:]...)
	if got, err := Decode(v5); err != nil || got.(RackStatusCmd).hasDriveServer() || !got.(RackStatusCmd).hasDayTwo() || got.(RackStatusCmd).Hosts[0].Status.ConfigDrive == nil {
		t.Fatalf("v5 body with the server decoded as %+v, %v", got, err)
	}
}
