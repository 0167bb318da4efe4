package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// errorOf decodes an error answer.
func errorOf(t *testing.T, raw []byte) wire.ErrorDetail {
	t.Helper()
	var b wire.ErrorBody
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatalf("error answer %s: %v", raw, err)
	}
	return b.Error
}

// TestFirmwareTaskFenceHTTP drives the day-two contract against a real
// in-process coordinator: a host's day-two spec is stored and validated,
// the rack's agent records a firmware task (GET and a status-less watch
// show it), detach and drain are refused with bmc_task_running naming the
// task until forced, the record survives the lease moving to another
// holder, who adopts and ends it while the old one is fenced off.
func TestFirmwareTaskFenceHTTP(t *testing.T) {
	testenv.SkipShort(t) // a Raft member: seconds
	n, admin := startLeader(t, "127.0.0.1")
	u := n.url
	op := newToken(t, u, admin, wire.RoleOperator, "")
	agent := newToken(t, u, admin, wire.RoleAgent, "r1")

	// The spec: stored, a spec change, refused with the field's path.
	spec := testHost("h1", "r1")
	must(t, 201, "PUT", u+"/v1/hosts/h1", op, spec, nil)
	spec.Firmware = []wire.FirmwareComponent{{Component: "bios", URL: "https://fw.example/bios.bin",
		Checksum: "sha256:" + strings.Repeat("0", 64)}}
	spec.RAID = &wire.RAIDSpec{HardwareRAIDVolumes: []wire.HardwareRAIDVolume{{Level: "1+0"}}}
	var h wire.Host
	must(t, 200, "PUT", u+"/v1/hosts/h1", op, spec, &h)
	if h.SpecIndex != h.ModifiedIndex || len(h.Firmware) != 1 || h.RAID == nil {
		t.Fatalf("day-two spec not stored as a spec change: %+v", h)
	}
	bad := spec
	bad.Firmware = []wire.FirmwareComponent{spec.Firmware[0], {Component: "bmc", URL: "file:///bmc.bin"}}
	if e := errorOf(t, must(t, 400, "PUT", u+"/v1/hosts/h1", op, bad, nil)); e.Field != "firmware[1].url" || !strings.Contains(e.Message, "must be http(s)") {
		t.Fatalf("bad firmware url: %+v", e)
	}

	var l wire.Lease
	must(t, 200, "POST", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "a1", TTL: wire.Duration(30 * time.Second)}, &l)
	rep := wire.StatusReport{Epoch: l.Epoch, Status: wire.HostStatus{ProvisioningState: wire.StateProvisioned, OperationalStatus: wire.OpOK,
		DayTwo: &wire.DayTwoStatus{}}}
	rep.Status.DayTwo = &wire.DayTwoStatus{LastErase: &wire.EraseStatus{}}
	if e := errorOf(t, must(t, 400, "PUT", u+"/v1/hosts/h1/status", agent, rep, nil)); e.Field != "status.dayTwo.lastErase.time" {
		t.Fatalf("a report with a bad dayTwo: %+v", e)
	}
	rep.Status.DayTwo = &wire.DayTwoStatus{Firmware: []wire.FirmwareStatus{{Component: "BMC", Version: "3.10"}}}
	var got wire.Host
	must(t, 200, "PUT", u+"/v1/hosts/h1/status", agent, rep, &got)
	if got.Status == nil || got.Status.DayTwo == nil || len(got.Status.DayTwo.Firmware) != 1 {
		t.Fatalf("dayTwo not stored: %+v", got.Status)
	}

	start := wire.BMCTaskRequest{Epoch: l.Epoch, CreatedIndex: h.CreatedIndex, Kind: wire.BMCTaskFirmware,
		TaskURI: "/redfish/v1/TaskService/Tasks/JID_1", Component: "bios"}
	var task wire.BMCTask
	must(t, 200, "POST", u+"/v1/hosts/h1/task", agent, start, &task)
	if task.Holder != "a1" || task.Epoch != l.Epoch || task.StartedAt.IsZero() {
		t.Fatalf("recorded %+v", task)
	}
	must(t, 200, "GET", u+"/v1/hosts/h1", op, nil, &h)
	if h.Task == nil || *h.Task != task {
		t.Fatalf("GET shows task %+v, want %+v", h.Task, task)
	}
	// The agent's status-less watch carries the record (an adopting
	// agent reads it there).
	var w wire.WatchResponse
	must(t, 200, "GET", u+"/v1/watch?rack=r1&status=false&timeout=1s", agent, nil, &w)
	if len(w.Hosts) != 1 || w.Hosts[0].Task == nil || w.Hosts[0].Task.TaskURI != start.TaskURI {
		t.Fatalf("status-less watch: %+v", w.Hosts)
	}

	for _, kind := range []string{"detach", "drain"} {
		e := errorOf(t, must(t, 409, "POST", u+"/v1/hosts/h1/intents/"+kind, op, wire.IntentRequest{Mode: modeOf(kind)}, nil))
		if e.Code != wire.CodeBMCTaskRunning {
			t.Fatalf("%s: code %s", kind, e.Code)
		}
		for _, want := range []string{"firmware task of component bios", "JID_1", "started " + task.StartedAt.Format(time.RFC3339),
			"--force", "unbootable"} {
			if !strings.Contains(e.Message, want) {
				t.Errorf("%s refusal %q does not say %q", kind, e.Message, want)
			}
		}
	}
	// online: false is accepted (the agent holds power while the task runs).
	spec.Online = false
	must(t, 200, "PUT", u+"/v1/hosts/h1", op, spec, nil)

	// The lease moves to another holder: the record stays, the old
	// holder is fenced off, the new one adopts the task and ends it.
	must(t, 200, "DELETE", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "a1", Epoch: l.Epoch}, nil)
	var l2 wire.Lease
	must(t, 200, "POST", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "a2", TTL: wire.Duration(30 * time.Second)}, &l2)
	must(t, 200, "GET", u+"/v1/hosts/h1", op, nil, &h)
	if h.Task == nil || h.Task.TaskURI != start.TaskURI {
		t.Fatalf("after the lease moved: %+v", h.Task)
	}
	if e := errorOf(t, must(t, 409, "DELETE", u+"/v1/hosts/h1/task", agent, wire.BMCTaskEnd{Epoch: l.Epoch, Outcome: wire.BMCTaskSucceeded}, nil)); e.Code != wire.CodeStaleEpoch {
		t.Fatalf("old holder's end: %+v", e)
	}
	second := start
	second.Epoch, second.TaskURI = l2.Epoch, "/redfish/v1/TaskService/Tasks/JID_2"
	if e := errorOf(t, must(t, 409, "POST", u+"/v1/hosts/h1/task", agent, second, nil)); e.Code != wire.CodeBMCTaskRunning {
		t.Fatalf("a second task: %+v", e)
	}
	start.Epoch = l2.Epoch
	must(t, 200, "POST", u+"/v1/hosts/h1/task", agent, start, &task)
	if task.AdoptedEpoch != l2.Epoch || task.Epoch != l.Epoch {
		t.Fatalf("adopted %+v", task)
	}

	// Forced, a detach goes through and the event log says so.
	var in wire.Intent
	must(t, 200, "POST", u+"/v1/hosts/h1/intents/detach", op, wire.IntentRequest{Force: true, Reason: "rack move"}, &in)
	if !in.Force {
		t.Fatalf("forced detach %+v", in)
	}
	var ended wire.Host
	must(t, 200, "DELETE", u+"/v1/hosts/h1/task", agent, wire.BMCTaskEnd{Epoch: l2.Epoch, Outcome: wire.BMCTaskSucceeded, Message: "2.19.1"}, &ended)
	if ended.Task != nil || ended.Name != "h1" {
		t.Fatalf("ended, host %+v", ended)
	}
	var evs wire.List[wire.Event]
	must(t, 200, "GET", u+"/v1/hosts/h1/events", op, nil, &evs)
	var reasons []string
	for _, e := range evs.Items {
		reasons = append(reasons, e.Reason)
	}
	if got := strings.Join(reasons, ","); got != "BMCTaskStarted,BMCTaskAdopted,FirmwareFenceForced,BMCTaskEnded" {
		t.Fatalf("events %s", got)
	}
	if ev := evs.Items[2]; ev.Time.IsZero() || ev.Type != wire.EventWarning {
		t.Fatalf("forced event %+v", ev)
	}
}

func modeOf(kind string) string {
	if kind == "drain" {
		return wire.DrainMaintenance
	}
	return ""
}
