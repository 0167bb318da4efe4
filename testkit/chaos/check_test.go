package chaos

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func ended(ms int) *time.Time { t := at(ms); return &t }

// twoLeases: epoch 10 held by a1 over [0, 5000] (expired), epoch 20 by a2
// from 6000, still held.
func twoLeases() map[string][]wire.LeaseRecord {
	return map[string][]wire.LeaseRecord{"r1": {
		{Epoch: 10, Holder: "a1", GrantedAt: at(0), EndedAt: ended(5000), End: "expired"},
		{Epoch: 20, Holder: "a2", GrantedAt: at(6000)},
	}}
}

func audit(ms int, ua string) bmcsim.AuditLine {
	return bmcsim.AuditLine{Time: at(ms).Format(time.RFC3339Nano), Port: 9001, UserAgent: ua, Method: "POST",
		Path: "/redfish/v1/Systems/1/Actions/ComputerSystem.Reset", Status: 204}
}

func mustMutations(t *testing.T, lines ...bmcsim.AuditLine) []Mutation {
	t.Helper()
	m, err := Mutations("r1", lines)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func wantViolation(t *testing.T, vs []Violation, checker, substr string) {
	t.Helper()
	for _, v := range vs {
		if v.Checker == checker && strings.Contains(v.What, substr) {
			return
		}
	}
	t.Fatalf("no %s violation containing %q in %v", checker, substr, vs)
}

func TestFencingClean(t *testing.T) {
	m := mustMutations(t,
		audit(100, "rackfence-agent/dev (a1; rack=r1; epoch=10)"),
		audit(4999, "rackfence-agent/dev (a1; rack=r1; epoch=10)"),
		audit(6001, "rackfence-agent/dev (a2; rack=r1; epoch=20)"))
	if vs := CheckFencing(twoLeases(), m); len(vs) != 0 {
		t.Fatalf("clean history reported: %v", vs)
	}
}

// Planted: the old holder's call arrives after its epoch ended (the stale
// agent woke up and mutated).
func TestFencingLateCall(t *testing.T) {
	m := mustMutations(t, audit(5200, "rackfence-agent/dev (a1; rack=r1; epoch=10)"))
	wantViolation(t, CheckFencing(twoLeases(), m), "fencing", "after its epoch 10 ended")
}

// Planted: a call before its epoch was granted, one under an epoch never
// granted, one naming the wrong holder, one with no epoch, one under
// another rack's lease.
func TestFencingBadCalls(t *testing.T) {
	cases := map[string]bmcsim.AuditLine{
		"before its epoch 20 was granted": audit(5900, "rackfence-agent/dev (a2; rack=r1; epoch=20)"),
		"never granted":                   audit(7000, "rackfence-agent/dev (a2; rack=r1; epoch=15)"),
		"which was granted to a2":         audit(7000, "rackfence-agent/dev (a1; rack=r1; epoch=20)"),
		"names no lease epoch":            audit(7000, "curl/8.0"),
		"under a lease of rack r2":        audit(7000, "rackfence-agent/dev (a9; rack=r2; epoch=20)"),
	}
	for want, line := range cases {
		wantViolation(t, CheckFencing(twoLeases(), mustMutations(t, line)), "fencing", want)
	}
}

// Planted: two holders' windows overlap, and a lease granted while the
// previous one never ended.
func TestFencingOverlap(t *testing.T) {
	l := twoLeases()
	l["r1"][0].EndedAt = ended(6500)
	wantViolation(t, CheckFencing(l, nil), "fencing", "before epoch 10 (a1) ended")
	l["r1"][0].EndedAt = nil
	wantViolation(t, CheckFencing(l, nil), "fencing", "never ended")
}

func TestMergeLeasesKeepsEnds(t *testing.T) {
	m := map[uint64]wire.LeaseRecord{}
	MergeLeases(m, []wire.LeaseRecord{{Epoch: 1, Holder: "a", GrantedAt: at(0), EndedAt: ended(10)}})
	MergeLeases(m, []wire.LeaseRecord{{Epoch: 1, Holder: "a", GrantedAt: at(0)}, {Epoch: 2, Holder: "b", GrantedAt: at(20)}})
	if m[1].EndedAt == nil || len(m) != 2 {
		t.Fatalf("merge lost an end or a record: %+v", m)
	}
}

// op builds a history entry; times in ms.
func op(id, client int, kind string, inv, ret int, result string) Op {
	return Op{ID: id, Client: client, Host: "h", Kind: kind, Invoke: int64(inv) * 1e6, Return: int64(ret) * 1e6, Result: result}
}

func write(id, client int, online bool, tag string, inv, ret int, result string) Op {
	o := op(id, client, OpWrite, inv, ret, result)
	o.Online, o.Tag = online, tag
	return o
}

func read(id, client int, online bool, tag string, detach bool, inv, ret int) Op {
	o := op(id, client, OpRead, inv, ret, ResultOK)
	o.Read = &HostView{Online: online, Tag: tag}
	if detach {
		o.Read.Detach = &IntentView{Index: 5}
	}
	return o
}

func TestLinearClean(t *testing.T) {
	ops := []Op{
		write(0, 0, false, "w1", 0, 10, ResultOK),
		read(1, 1, false, "w1", false, 20, 30),
		// Concurrent with the read at 40–60, which may see either.
		write(2, 0, true, "w2", 40, 50, ResultOK),
		read(3, 1, true, InitialTag+"x", false, 0, 0), // replaced below
	}
	ops[3] = read(3, 1, false, "w1", false, 41, 60)
	// An ambiguous write that seems never applied, and an ambiguous
	// detach that a later read sees applied.
	ops = append(ops, write(4, 2, false, "w3", 70, 80, ResultInfo), read(5, 1, true, "w2", false, 90, 100),
		op(6, 2, OpDetach, 110, 120, ResultInfo), read(7, 1, true, "w2", true, 130, 140),
		op(8, 2, OpAttach, 150, 160, ResultFail), read(9, 1, true, "w2", true, 170, 180))
	res, vs := CheckLinear(ops, 10*time.Second, "")
	if len(vs) != 0 || len(res) != 1 || res[0].Result != "ok" {
		t.Fatalf("clean history: %v %+v", vs, res)
	}
}

// Planted: a stale read (the read starts after w2 was acknowledged and
// still sees w1).
func TestLinearStaleRead(t *testing.T) {
	ops := []Op{
		write(0, 0, false, "w1", 0, 10, ResultOK),
		write(1, 0, true, "w2", 20, 30, ResultOK),
		read(2, 1, false, "w1", false, 40, 50),
	}
	dir := t.TempDir()
	_, vs := CheckLinear(ops, 10*time.Second, dir)
	wantViolation(t, vs, "linearizability", "host h: its 3 operations have no linearization")
	if _, err := os.Stat(filepath.Join(dir, "linear-h.html")); err != nil {
		t.Fatalf("no visualization of the illegal history: %v", err)
	}
}

// Planted: a detach acknowledged, then a read that does not see it.
func TestLinearLostIntent(t *testing.T) {
	ops := []Op{op(0, 0, OpDetach, 0, 10, ResultOK), read(1, 1, true, InitialTag, false, 20, 30)}
	_, vs := CheckLinear(ops, 10*time.Second, "")
	wantViolation(t, vs, "linearizability", "no linearization")
}

func TestDurableClean(t *testing.T) {
	ops := []Op{
		write(0, 0, false, "w1", 0, 10, ResultOK),
		write(1, 1, true, "w2", 5, 15, ResultOK), // concurrent: either may win
		op(2, 0, OpDetach, 20, 30, ResultOK),
		write(3, 0, false, "w3", 40, 50, ResultInfo), // maybe applied: may win or not
	}
	for _, tag := range []string{"w1", "w2", "w3"} {
		final := map[string]*HostView{"h": {Tag: tag, Detach: &IntentView{Index: 1, Acked: true}}}
		if vs := CheckDurable(ops, final); len(vs) != 0 {
			t.Fatalf("final tag %s: %v", tag, vs)
		}
	}
}

// Planted: the final state shows an older value than an acknowledged
// write, a detach acknowledged but gone, and a value no one wrote.
func TestDurableLost(t *testing.T) {
	ops := []Op{
		write(0, 0, false, "w1", 0, 10, ResultOK),
		write(1, 0, true, "w2", 20, 30, ResultOK),
		op(2, 0, OpDetach, 40, 50, ResultOK),
	}
	vs := CheckDurable(ops, map[string]*HostView{"h": {Tag: "w1"}})
	wantViolation(t, vs, "durability", `acknowledged tag tag="w2" (op 1) lost`)
	wantViolation(t, vs, "durability", `acknowledged detach detach="set" (op 2) lost`)
	vs = CheckDurable(ops, map[string]*HostView{"h": {Tag: "w9"}})
	wantViolation(t, vs, "durability", `final tag "w9" was never written`)
	vs = CheckDurable(ops, map[string]*HostView{"h": {Tag: InitialTag}})
	wantViolation(t, vs, "durability", `"w1" (op 0) lost`)
}

// Planted: an intent read acknowledged, then read unacknowledged.
func TestDurableAckLost(t *testing.T) {
	r1 := read(0, 1, true, InitialTag, true, 0, 10)
	r1.Read.Detach.Acked = true
	r2 := read(1, 1, true, InitialTag, true, 20, 30)
	r2.ID = 7
	vs := CheckDurable([]Op{op(2, 0, OpDetach, -20, -10, ResultOK), r1, r2},
		map[string]*HostView{"h": {Tag: InitialTag, Detach: &IntentView{Index: 5, Acked: true}}})
	wantViolation(t, vs, "durability", "detach intent 5 was read acknowledged, then unacknowledged by read 7")
}

// Planted: a panic and a race report in the logs.
func TestLogsPanic(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "agent-a.log"), []byte("ok\npanic: runtime error: index out of range\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "coordinator-c1.log"), []byte("WARNING: DATA RACE\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bmcsim.log"), []byte("all fine\n"), 0o644)
	vs := CheckLogs(dir)
	if len(vs) != 2 {
		t.Fatalf("want 2 violations, got %v", vs)
	}
	wantViolation(t, vs, "logs", "agent-a.log:2: panic:")
	wantViolation(t, vs, "logs", "coordinator-c1.log:1: WARNING: DATA RACE")
}

func TestScheduleSeeded(t *testing.T) {
	a := Schedule(7, 5*time.Minute, []string{"r1", "r2"})
	b := Schedule(7, 5*time.Minute, []string{"r1", "r2"})
	c := Schedule(8, 5*time.Minute, []string{"r1", "r2"})
	if len(a) < 10 {
		t.Fatalf("5 minutes gave only %d faults", len(a))
	}
	same := func(x, y []Fault) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a, b) {
		t.Fatal("the same seed gave two schedules")
	}
	if same(a, c) {
		t.Fatal("seeds 7 and 8 gave the same schedule")
	}
	for _, f := range a {
		if f.At > 5*time.Minute-4*time.Second {
			t.Fatalf("fault %s starts in the last 4 s", f)
		}
	}
}

func TestClassify(t *testing.T) {
	if Classify(nil) != ResultOK {
		t.Fatal("nil is not ok")
	}
	if Classify(os.ErrDeadlineExceeded) != ResultInfo {
		t.Fatal("a timeout is not info")
	}
	if Classify(&client.Error{Status: 409, Code: wire.CodeConflict}) != ResultFail {
		t.Fatal("a 409 answer is not a definite failure")
	}
	if Classify(&client.Error{Status: 503, Code: wire.CodeNoLeader}) != ResultInfo {
		t.Fatal("a 503 answer is not info (the write may have been applied)")
	}
}

func TestTotal(t *testing.T) {
	a := &Result{Seed: 1, Duration: "5m0s", Faults: map[string]int{FaultPauseAgent: 2}, Ops: 10, Mutations: 3,
		OpsByResult: map[string]int{ResultInfo: 1}, ByChecker: map[string]int{}, Converge: map[string]int64{"h1": 10, "h2": 30}}
	b := &Result{Seed: 2, Duration: "1m0s", Faults: map[string]int{FaultPauseAgent: 1, FaultClient: 1}, Ops: 5, Mutations: 1,
		OpsByResult: map[string]int{}, ByChecker: map[string]int{"fencing": 1}, Converge: map[string]int64{"h1": 20},
		Violations: []Violation{{Checker: "fencing", What: "planted"}}}
	c := Total([]*Result{a, b})
	if c.Runs != 2 || c.Minutes != 6 || c.Faults[FaultPauseAgent] != 3 || c.Ops != 15 || c.OpsInfo != 1 || c.Mutations != 4 ||
		c.ByChecker["fencing"] != 1 || len(c.Failed) != 1 || c.Failed[0] != 2 || c.ConvergeP50 != 20 || c.ConvergeMax != 30 {
		t.Fatalf("totals wrong: %+v", c)
	}
}
