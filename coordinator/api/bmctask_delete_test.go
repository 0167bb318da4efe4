package api

import (
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestFirmwareTaskFencesDeleteHTTP: deleting a host whose BMC runs a
// firmware task (or a raid or erase task) is refused with bmc_task_running naming the task and what
// --force risks, as detach and drain are; forced, the deletion is
// requested and the host's events say so. Without a task it is deleted
// as before.
func TestFirmwareTaskFencesDeleteHTTP(t *testing.T) {
	testenv.SkipShort(t) // a Raft member: seconds
	n, admin := startLeader(t, "127.0.0.1")
	u := n.url
	op := newToken(t, u, admin, wire.RoleOperator, "")
	agent := newToken(t, u, admin, wire.RoleAgent, "r1")
	var h wire.Host
	must(t, 201, "PUT", u+"/v1/hosts/h1", op, testHost("h1", "r1"), &h)
	must(t, 201, "PUT", u+"/v1/hosts/h2", op, testHost("h2", "r1"), nil)
	var l wire.Lease
	must(t, 200, "POST", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "a1", TTL: wire.Duration(30 * time.Second)}, &l)
	rep := wire.StatusReport{Epoch: l.Epoch, Status: wire.HostStatus{ProvisioningState: wire.StateServicing, OperationalStatus: wire.OpOK}}
	must(t, 200, "PUT", u+"/v1/hosts/h1/status", agent, rep, nil)
	must(t, 200, "PUT", u+"/v1/hosts/h2/status", agent, rep, nil)
	var task wire.BMCTask
	must(t, 200, "POST", u+"/v1/hosts/h1/task", agent, wire.BMCTaskRequest{Epoch: l.Epoch, CreatedIndex: h.CreatedIndex,
		Kind: wire.BMCTaskFirmware, TaskURI: "/redfish/v1/TaskService/Tasks/JID_9", Component: "bmc"}, &task)

	e := errorOf(t, must(t, 409, "DELETE", u+"/v1/hosts/h1", op, nil, nil))
	if e.Code != wire.CodeBMCTaskRunning {
		t.Fatalf("delete during a flash: %+v", e)
	}
	for _, want := range []string{"firmware task of component bmc", "JID_9", "started " + task.StartedAt.Format(time.RFC3339),
		"wait for it to end", "--force", "half-written firmware"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("refusal %q does not say %q", e.Message, want)
		}
	}
	must(t, 200, "GET", u+"/v1/hosts/h1", op, nil, &h)
	if h.DeletionRequested {
		t.Fatal("the refused deletion was requested anyway")
	}
	if e := errorOf(t, must(t, 400, "DELETE", u+"/v1/hosts/h1?force=yes", op, nil, nil)); e.Field != "force" {
		t.Fatalf("force=yes: %+v", e)
	}

	must(t, 202, "DELETE", u+"/v1/hosts/h1?force=true", op, nil, &h)
	if !h.DeletionRequested || h.Task == nil {
		t.Fatalf("forced deletion: %+v", h)
	}
	var evs wire.List[wire.Event]
	must(t, 200, "GET", u+"/v1/hosts/h1/events", op, nil, &evs)
	last := evs.Items[len(evs.Items)-1]
	if last.Reason != wire.ReasonFirmwareFenceForced || last.Type != wire.EventWarning || last.Time.IsZero() ||
		!strings.Contains(last.Message, "delete forced while a firmware task of component bmc") {
		t.Fatalf("forced event %+v", last)
	}
	// A host without a task: deleted as before (202: the agent finishes).
	must(t, 202, "DELETE", u+"/v1/hosts/h2", op, nil, nil)

	// A RAID job and a disk erase fence the deletion alike, the refusal
	// naming the kind and the resource.
	for _, k := range []struct{ name, kind, component, says string }{
		{"h3", wire.BMCTaskRAID, "Create /redfish/v1/Systems/1/Storage/RAID.1", "a raid task Create /redfish/v1/Systems/1/Storage/RAID.1"},
		{"h4", wire.BMCTaskErase, "Drive.SecureErase /redfish/v1/Systems/1/Storage/1/Drives/0", "an erase task Drive.SecureErase /redfish/v1/Systems/1/Storage/1/Drives/0"},
	} {
		var hk wire.Host
		must(t, 201, "PUT", u+"/v1/hosts/"+k.name, op, testHost(k.name, "r1"), &hk)
		must(t, 200, "PUT", u+"/v1/hosts/"+k.name+"/status", agent, rep, nil)
		must(t, 200, "POST", u+"/v1/hosts/"+k.name+"/task", agent, wire.BMCTaskRequest{Epoch: l.Epoch, CreatedIndex: hk.CreatedIndex,
			Kind: k.kind, TaskURI: "/redfish/v1/TaskService/Tasks/JID_" + k.name, Component: k.component}, nil)
		e := errorOf(t, must(t, 409, "DELETE", u+"/v1/hosts/"+k.name, op, nil, nil))
		if e.Code != wire.CodeBMCTaskRunning || !strings.Contains(e.Message, k.says) || !strings.Contains(e.Message, "--force") {
			t.Errorf("delete during a %s task: %+v", k.kind, e)
		}
		must(t, 200, "GET", u+"/v1/hosts/"+k.name, op, nil, &hk)
		if hk.DeletionRequested {
			t.Errorf("the refused deletion of %s was requested anyway", k.name)
		}
	}
}
