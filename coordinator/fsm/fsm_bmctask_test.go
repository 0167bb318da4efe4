package fsm

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

var taskAt = time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)

func startFirmware(epoch, created uint64) BMCTaskCmd {
	return BMCTaskCmd{Rack: "r1", Name: "h1", Time: taskAt, Start: &wire.BMCTaskRequest{Epoch: epoch, CreatedIndex: created,
		Kind: wire.BMCTaskFirmware, TaskURI: "/redfish/v1/TaskService/Tasks/7", Component: "bios"}}
}

// TestBMCTaskSurvivesLeaseChange: the lease holder records a firmware
// task; status reports do not drop it; the lease moves to another agent
// and the record stays, the old holder can no longer touch it, the new
// one adopts it (same task) but cannot start a second one, and ends it.
func TestBMCTaskSurvivesLeaseChange(t *testing.T) {
	h, l := opHost(t, wire.StateProvisioned)
	hst, _ := h.f.Host("h1")
	task := h.ok(startFirmware(l.Epoch, hst.CreatedIndex)).(wire.BMCTask)
	if task.Epoch != l.Epoch || task.Holder != "a" || !task.StartedAt.Equal(taskAt) || task.CreatedIndex != h.index {
		t.Fatalf("recorded %+v", task)
	}
	// A retry under the same epoch writes nothing.
	before := h.f.AppliedIndex()
	if again := h.ok(startFirmware(l.Epoch, hst.CreatedIndex)).(wire.BMCTask); again != task {
		t.Fatalf("retry: %+v, want %+v", again, task)
	}
	if got, _ := h.f.Host("h1"); got.ModifiedIndex > before {
		t.Fatalf("a retry rewrote the host (modifiedIndex %d)", got.ModifiedIndex)
	}
	// A status report and a spec change keep the record.
	h.ok(StatusCmd{Rack: "r1", Name: "h1", Report: wire.StatusReport{Epoch: l.Epoch, Status: wire.HostStatus{ProvisioningState: wire.StateProvisioned}}})
	spec := host("h1", "r1")
	spec.Online = false
	h.ok(PutHostCmd{Host: spec})
	if got, _ := h.f.Host("h1"); got.Task == nil || *got.Task != task {
		t.Fatalf("after a report and a spec change: %+v", got.Task)
	}

	// The lease moves: agent a's lease expires, b acquires.
	h.ok(LeaseExpireCmd{Rack: "r1", Epoch: l.Epoch, RenewIndex: h.f.s.Racks["r1"].Lease.RenewIndex})
	l2 := h.ok(LeaseAcquireCmd{Rack: "r1", Holder: "b", TTL: 10 * time.Second}).(wire.Lease)
	if got, _ := h.f.Host("h1"); got.Task == nil || *got.Task != task {
		t.Fatalf("the lease change dropped the record: %+v", got.Task)
	}
	// The old holder is fenced off: neither a new record nor an end.
	h.refused(startFirmware(l.Epoch, hst.CreatedIndex), wire.CodeStaleEpoch)
	h.refused(BMCTaskCmd{Rack: "r1", Name: "h1", End: &wire.BMCTaskEnd{Epoch: l.Epoch, Outcome: wire.BMCTaskSucceeded}}, wire.CodeStaleEpoch)
	// The new holder cannot start a second task while one runs.
	other := startFirmware(l2.Epoch, hst.CreatedIndex)
	other.Start.TaskURI = "/redfish/v1/TaskService/Tasks/8"
	e := h.refused(other, wire.CodeBMCTaskRunning)
	for _, want := range []string{"firmware task of component bios", "/redfish/v1/TaskService/Tasks/7", "2026-11-28T04:00:00Z"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("refusal %q does not name %q", e.Message, want)
		}
	}
	// It adopts the task by its record.
	adopted := h.ok(startFirmware(l2.Epoch, hst.CreatedIndex)).(wire.BMCTask)
	if adopted.AdoptedEpoch != l2.Epoch || adopted.Epoch != l.Epoch || !adopted.StartedAt.Equal(taskAt) || adopted.CreatedIndex != task.CreatedIndex {
		t.Fatalf("adopted %+v", adopted)
	}
	// A snapshot carries the record (a member restarting mid-task).
	var buf bytes.Buffer
	if err := h.f.snapshot().Encode(&buf); err != nil {
		t.Fatal(err)
	}
	g := NewFSM()
	if err := g.Restore(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if got, _ := g.Host("h1"); !sameState(g.s, h.f.s) || got.Task == nil || *got.Task != adopted {
		t.Fatalf("restored record %+v, want %+v", got.Task, adopted)
	}
	// An end naming another task is refused; the right one ends it.
	h.refused(BMCTaskCmd{Rack: "r1", Name: "h1", End: &wire.BMCTaskEnd{Epoch: l2.Epoch, Outcome: wire.BMCTaskSucceeded, TaskURI: "/redfish/v1/TaskService/Tasks/8"}}, wire.CodeConflict)
	h.ok(BMCTaskCmd{Rack: "r1", Name: "h1", Time: taskAt, End: &wire.BMCTaskEnd{Epoch: l2.Epoch, Outcome: wire.BMCTaskFailed, Message: "image rejected"}})
	got, _ := h.f.Host("h1")
	if got.Task != nil {
		t.Fatalf("ended, record still %+v", got.Task)
	}
	var reasons []string
	for _, ev := range eventsOf(h.f.s.Hosts["h1"].Events) {
		reasons = append(reasons, ev.Reason)
	}
	if strings.Join(reasons, ",") != "BMCTaskStarted,BMCTaskAdopted,BMCTaskEnded" {
		t.Fatalf("events %v", reasons)
	}
	if last := eventsOf(h.f.s.Hosts["h1"].Events)[2]; last.Type != wire.EventWarning || !strings.Contains(last.Message, "failed: image rejected") {
		t.Fatalf("end event %+v", last)
	}
	h.refused(BMCTaskCmd{Rack: "r1", Name: "h1", End: &wire.BMCTaskEnd{Epoch: l2.Epoch, Outcome: wire.BMCTaskSucceeded}}, wire.CodeNotFound)
}

// TestBMCTaskFenced: a record is refused for a host of another rack, a
// rack without a lease, and a host created again since the agent saw it.
func TestBMCTaskFenced(t *testing.T) {
	h, l := opHost(t, wire.StateProvisioned)
	hst, _ := h.f.Host("h1")
	h.ok(PutHostCmd{Host: host("h2", "r2")})
	c := startFirmware(l.Epoch, hst.CreatedIndex)
	c.Name = "h2"
	h.refused(c, wire.CodeForbidden)
	h.refused(startFirmware(l.Epoch, hst.CreatedIndex+100), wire.CodeNotFound)
	h.refused(BMCTaskCmd{Rack: "r1", Name: "h1"}, wire.CodeBadRequest)
	h.ok(LeaseReleaseCmd{Rack: "r1", Holder: "a", Epoch: l.Epoch})
	h.refused(startFirmware(l.Epoch, hst.CreatedIndex), wire.CodeStaleEpoch)
}

// TestFirmwareTaskFencesDetachAndDrain: while a firmware task runs, a
// detach or drain is refused with bmc_task_running naming the task and
// what to do; forced, it goes through and the event log says so. A resume
// intent is not refused.
func TestFirmwareTaskFencesDetachAndDrain(t *testing.T) {
	h, l := opHost(t, wire.StateProvisioned)
	hst, _ := h.f.Host("h1")
	h.ok(startFirmware(l.Epoch, hst.CreatedIndex))
	for _, kind := range []string{wire.IntentDetach, wire.IntentDrain} {
		e := h.refused(PutIntentCmd{Name: "h1", Kind: kind, Intent: wire.Intent{Mode: wire.DrainMaintenance}}, wire.CodeBMCTaskRunning)
		for _, want := range []string{"firmware task of component bios", "/redfish/v1/TaskService/Tasks/7", "started 2026-11-28T04:00:00Z",
			"wait for it to end", "--force", "a power change during a flash can leave the board unbootable"} {
			if !strings.Contains(e.Message, want) {
				t.Errorf("%s refusal %q does not say %q", kind, e.Message, want)
			}
		}
	}
	if got, _ := h.f.Host("h1"); got.Intents != nil {
		t.Fatalf("refused intents were stored: %+v", got.Intents)
	}
	at := taskAt.Add(time.Minute)
	in := h.ok(PutIntentCmd{Name: "h1", Kind: wire.IntentDetach, Intent: wire.Intent{Force: true, Actor: "op"}, Time: at}).(wire.Intent)
	if !in.Force {
		t.Fatalf("forced detach %+v", in)
	}
	evs := eventsOf(h.f.s.Hosts["h1"].Events)
	last := evs[len(evs)-1]
	if last.Reason != wire.ReasonFirmwareFenceForced || last.Type != wire.EventWarning || !last.Time.Equal(at) ||
		!strings.Contains(last.Message, "detach forced while a firmware task") {
		t.Fatalf("forced detach event %+v", last)
	}
	// Resume is not fenced (it hands nothing over).
	h.ok(PutIntentCmd{Name: "h1", Kind: wire.IntentResume, Intent: wire.Intent{}})
}

// TestDayTwoSpec: the day-two fields are spec (specIndex moves), stored
// as copies sharing nothing with the command, written as PutHost body
// version 4 only when set, kept by a snapshot and a restore.
func TestDayTwoSpec(t *testing.T) {
	h := newFSMT(t)
	h.ok(PutHostCmd{Host: host("h1", "r1")})
	yes, size := true, 100
	spec := host("h1", "r1")
	spec.BIOS = &wire.BIOSSpec{SRIOVEnabled: &yes, Settings: map[string]string{"ProcTurboMode": "Enabled"}}
	spec.Firmware = []wire.FirmwareComponent{{Component: "bmc", URL: "https://fw/bmc.bin", Timeout: wire.Duration(90 * time.Minute)}}
	spec.RAID = &wire.RAIDSpec{HardwareRAIDVolumes: []wire.HardwareRAIDVolume{{Level: "1", SizeGibibytes: &size}}}
	spec.UpdatePolicy = &wire.UpdatePolicy{FirmwareUpdates: wire.UpdatePolicyOnReboot}
	b, err := Encode(PutHostCmd{Host: spec})
	if err != nil {
		t.Fatal(err)
	}
	if b[1] != putHostDayTwoVersion {
		t.Fatalf("a day-two host is body version %d, want %d", b[1], putHostDayTwoVersion)
	}
	if b, _ := Encode(PutHostCmd{Host: host("h1", "r1")}); b[1] != BodyBinary {
		t.Fatalf("a plain host is body version %d, want %d", b[1], BodyBinary)
	}
	r := h.ok(PutHostCmd{Host: spec}).(PutHostResult)
	if r.Host.SpecIndex != h.index {
		t.Fatalf("a day-two change kept specIndex %d (index %d)", r.Host.SpecIndex, h.index)
	}
	*spec.BIOS.SRIOVEnabled, spec.BIOS.Settings["ProcTurboMode"], size = false, "x", 5
	spec.Firmware[0].URL = "changed"
	got, _ := h.f.Host("h1")
	if !*got.BIOS.SRIOVEnabled || got.BIOS.Settings["ProcTurboMode"] != "Enabled" || *got.RAID.HardwareRAIDVolumes[0].SizeGibibytes != 100 ||
		got.Firmware[0].URL != "https://fw/bmc.bin" || got.Firmware[0].Timeout.D() != 90*time.Minute || got.UpdatePolicy.FirmwareUpdates != "onReboot" {
		t.Fatalf("stored spec shares the command's: %+v %+v", got.BIOS, got.RAID)
	}
	// The same spec again is no change.
	same := got
	same.Status, same.Intents = nil, nil
	if r := h.ok(PutHostCmd{Host: same}).(PutHostResult); r.Host.ModifiedIndex != got.ModifiedIndex {
		t.Fatalf("the same day-two spec was written again")
	}
	var buf bytes.Buffer
	if err := h.f.snapshot().Encode(&buf); err != nil {
		t.Fatal(err)
	}
	g := NewFSM()
	if err := g.Restore(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if !sameState(g.s, h.f.s) {
		t.Fatal("restored state differs")
	}
}
