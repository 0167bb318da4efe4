package ctl

import (
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// host get on a host whose BMC runs a firmware task names it and what it
// holds back.
func TestHostDetailBMCTask(t *testing.T) {
	var b strings.Builder
	hostDetail(&b, &wire.Host{Name: "h", Rack: "r1", Task: &wire.BMCTask{Kind: wire.BMCTaskFirmware, Component: "bmc",
		TaskURI: "/redfish/v1/TaskService/Tasks/9", Holder: "agent-r1", Epoch: 5, AdoptedEpoch: 12,
		StartedAt: time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)}})
	out := b.String()
	for _, want := range []string{
		"firmware of bmc, /redfish/v1/TaskService/Tasks/9, started 2026-11-28T04:00:00Z by agent-r1, adopted under epoch 12",
		"detach, drain, pivot and delete wait for it (--force risks half-written firmware)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("host get does not say %q:\n%s", want, out)
		}
	}
}

// A disk erase or a RAID job holds the same requests back as a flash.
func TestHostDetailEraseTask(t *testing.T) {
	for kind, risk := range map[string]string{wire.BMCTaskErase: "a half-erased disk", wire.BMCTaskRAID: "half-built volumes"} {
		var b strings.Builder
		hostDetail(&b, &wire.Host{Name: "h", Rack: "r1", Task: &wire.BMCTask{Kind: kind, Component: "Drive.SecureErase /redfish/v1/Systems/1/Storage/1/Drives/0",
			TaskURI: "/redfish/v1/Systems/1/Storage/1/Drives/0", Holder: "agent-r1", Epoch: 5, StartedAt: time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)}})
		want := "detach, drain, pivot and delete wait for it (--force risks " + risk + ")"
		if out := b.String(); !strings.Contains(out, want) {
			t.Errorf("host get of a %s task does not say %q:\n%s", kind, want, out)
		}
	}
}

// host apply compares a file's host with the stored one: a firmware task
// the agent recorded is not part of the spec, so a flash in progress
// makes no difference to apply (it would send the host again).
func TestSpecOnlyDropsTheTask(t *testing.T) {
	stored := wire.Host{Name: "h", Rack: "r1", Consumer: "c", Task: &wire.BMCTask{Kind: wire.BMCTaskFirmware, Component: "bmc", Epoch: 3}}
	file := wire.Host{Name: "h", Rack: "r1", Consumer: "c"}
	if diff := specDiff(specOnly(stored), file); len(diff) > 0 {
		t.Fatalf("a recorded BMC task reads as a spec change: %v", diff)
	}
}
