package fsm

import (
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestBMCTaskOfEveryKindFences: a recorded raid, erase or bios task
// refuses a detach, a drain, a pivot's detach and a fenced deletion like
// a flash does, the message naming the kind, the component, the BMC task
// and what forcing risks for that kind; nothing is stored. Forced, the
// detach and the deletion go through and the event log records
// BMCTaskFenceForced.
func TestBMCTaskOfEveryKindFences(t *testing.T) {
	for _, tc := range []struct{ kind, component, uri, harm, leftover string }{
		{wire.BMCTaskRAID, "Create /redfish/v1/Systems/1/Storage/RAID.1", "/redfish/v1/TaskService/Tasks/JID_R",
			"a power change during a RAID job breaks it off and can leave the volumes half built", "half-built volumes"},
		{wire.BMCTaskErase, "Drive.SecureErase /redfish/v1/Systems/1/Storage/1/Drives/0", "/redfish/v1/Systems/1/Storage/1/Drives/0",
			"a power change during a disk erase breaks it off and leaves the disk half erased", "a half-erased disk"},
		{wire.BMCTaskBIOS, "", "/redfish/v1/TaskService/Tasks/JID_B",
			"a power change while the BMC applies BIOS settings can leave them half applied", "half-applied BIOS settings"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			h, l := opHost(t, wire.StateProvisioned)
			hst, _ := h.f.Host("h1")
			c := startFirmware(l.Epoch, hst.CreatedIndex)
			c.Start.Kind, c.Start.Component, c.Start.TaskURI = tc.kind, tc.component, tc.uri
			h.ok(c)
			named := "a " + tc.kind + " task"
			if tc.kind == wire.BMCTaskErase {
				named = "an erase task"
			}
			if tc.component != "" {
				named += " " + tc.component
			}
			for _, cmd := range []Command{
				PutIntentCmd{Name: "h1", Kind: wire.IntentDetach},
				PutIntentCmd{Name: "h1", Kind: wire.IntentDetach, Intent: wire.Intent{Reason: pivotReason + "tier-b"}},
				PutIntentCmd{Name: "h1", Kind: wire.IntentDrain, Intent: wire.Intent{Mode: wire.DrainMaintenance}},
				DeleteHostCmd{Name: "h1", TaskFence: true, Time: taskAt},
			} {
				e := h.refused(cmd, wire.CodeBMCTaskRunning)
				risk := tc.harm
				if _, del := cmd.(DeleteHostCmd); del {
					risk = "can be left with " + tc.leftover
				}
				for _, want := range []string{named, tc.uri, "started 2026-11-28T04:00:00Z", "wait for it to end", "rackfencectl host get h1", "--force", risk} {
					if !strings.Contains(e.Message, want) {
						t.Errorf("%+v: refusal %q does not say %q", cmd, e.Message, want)
					}
				}
			}
			if got, _ := h.f.Host("h1"); got.Intents != nil || got.DeletionRequested {
				t.Fatalf("a refused request was stored: %+v deletion %v", got.Intents, got.DeletionRequested)
			}
			at := taskAt.Add(time.Minute)
			h.ok(PutIntentCmd{Name: "h1", Kind: wire.IntentDetach, Intent: wire.Intent{Force: true}, Time: at})
			r := h.ok(DeleteHostCmd{Name: "h1", TaskFence: true, Force: true, Time: at}).(DeleteHostResult)
			if !r.Host.DeletionRequested || r.Host.Task == nil {
				t.Fatalf("forced deletion %+v", r.Host)
			}
			evs := eventsOf(h.f.s.Hosts["h1"].Events)
			for i, op := range []string{"detach", "delete"} {
				ev := evs[len(evs)-2+i]
				if ev.Reason != "BMCTaskFenceForced" || ev.Type != wire.EventWarning || !ev.Time.Equal(at) ||
					!strings.Contains(ev.Message, op+" forced while "+named) {
					t.Errorf("forced %s event %+v", op, ev)
				}
			}
		})
	}
}
