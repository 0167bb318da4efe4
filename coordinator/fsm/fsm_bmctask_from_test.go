package fsm

import (
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestBMCTaskKeepsFromVersion: the version before the flash stays in the
// record when another lease holder adopts it (the adoption names none),
// so the new holder can judge the flash by it.
func TestBMCTaskKeepsFromVersion(t *testing.T) {
	h, l := opHost(t, wire.StateProvisioned)
	hst, _ := h.f.Host("h1")
	c := startFirmware(l.Epoch, hst.CreatedIndex)
	c.Start.FromVersion = "U46 v1.80"
	if got := h.ok(c).(wire.BMCTask); got.FromVersion != "U46 v1.80" {
		t.Fatalf("recorded %+v", got)
	}
	h.ok(LeaseReleaseCmd{Rack: "r1", Holder: "a", Epoch: l.Epoch})
	l2 := h.ok(LeaseAcquireCmd{Rack: "r1", Holder: "b", TTL: 10 * time.Second}).(wire.Lease)
	adopt := startFirmware(l2.Epoch, hst.CreatedIndex)
	got := h.ok(adopt).(wire.BMCTask)
	if got.AdoptedEpoch != l2.Epoch || got.FromVersion != "U46 v1.80" {
		t.Fatalf("adopted %+v: want the version before the flash kept", got)
	}
	if v := wire.ValidateBMCTask(&wire.BMCTaskRequest{Epoch: 1, CreatedIndex: 1, Kind: wire.BMCTaskRAID,
		TaskURI: "/redfish/v1/TaskService/Tasks/1", FromVersion: "x"}); v == nil {
		t.Fatalf("a RAID task with a version before the flash was accepted")
	}
}
