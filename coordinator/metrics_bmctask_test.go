package coordinator

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// Recorded BMC tasks are counted by kind, aged from their startedAt, and
// leave the count when ended.
func TestBMCTaskMetrics(t *testing.T) {
	h := newFSMT(t)
	clk := &fakeClock{t: t0}
	c := newFleetCollector(h.f, clk.now)
	r := h.ok(fsm.PutHostCmd{Host: host("h1", "r1"), Time: t0}).(fsm.PutHostResult)
	l := h.ok(fsm.LeaseAcquireCmd{Rack: "r1", Holder: "a1", TTL: time.Minute, Time: t0}).(wire.Lease)
	h.ok(fsm.BMCTaskCmd{Rack: "r1", Name: "h1", Time: t0, Start: &wire.BMCTaskRequest{Epoch: l.Epoch, CreatedIndex: r.Host.CreatedIndex,
		Kind: wire.BMCTaskFirmware, TaskURI: "/redfish/v1/TaskService/Tasks/1", Component: "bmc"}})
	clk.add(20 * time.Minute)
	want := func(n, age string) string {
		return `
# HELP rackfence_bmc_tasks_running Hosts whose rack agent recorded a long BMC task (firmware, bios, raid, erase) that has not ended, by kind.
# TYPE rackfence_bmc_tasks_running gauge
rackfence_bmc_tasks_running{kind="bios"} 0
rackfence_bmc_tasks_running{kind="erase"} 0
rackfence_bmc_tasks_running{kind="firmware"} ` + n + `
rackfence_bmc_tasks_running{kind="raid"} 0
# HELP rackfence_bmc_task_oldest_seconds Age of the oldest recorded BMC task of the kind, from its startedAt (the leader's clock when it was recorded); 0 when none.
# TYPE rackfence_bmc_task_oldest_seconds gauge
rackfence_bmc_task_oldest_seconds{kind="bios"} 0
rackfence_bmc_task_oldest_seconds{kind="erase"} 0
rackfence_bmc_task_oldest_seconds{kind="firmware"} ` + age + `
rackfence_bmc_task_oldest_seconds{kind="raid"} 0
`
	}
	names := []string{"rackfence_bmc_tasks_running", "rackfence_bmc_task_oldest_seconds"}
	if err := testutil.CollectAndCompare(c, strings.NewReader(want("1", "1200")), names...); err != nil {
		t.Fatal(err)
	}
	h.ok(fsm.BMCTaskCmd{Rack: "r1", Name: "h1", Time: t0, End: &wire.BMCTaskEnd{Epoch: l.Epoch, Outcome: wire.BMCTaskSucceeded}})
	if err := testutil.CollectAndCompare(c, strings.NewReader(want("0", "0")), names...); err != nil {
		t.Fatal(err)
	}
}
