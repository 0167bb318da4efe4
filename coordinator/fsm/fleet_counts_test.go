package fsm

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// recountFleet is Fleet by a full walk of every host (as Fleet was
// before the counts were kept): the reference they are compared with.
func recountFleet(f *FSM) Fleet {
	f.mu.RLock()
	defer f.mu.RUnlock()
	fl := Fleet{ByState: map[string]int{}, ByStatus: map[string]int{}, Errors: map[RackError]int{}}
	for _, h := range f.s.Hosts {
		ps, op := "none", "none"
		if st := h.Status; st != nil {
			if st.ProvisioningState != "" {
				ps = st.ProvisioningState
			}
			if st.OperationalStatus != "" {
				op = st.OperationalStatus
			}
			if st.OperationalStatus == wire.OpError {
				fl.Errors[RackError{h.Rack, st.ErrorType}]++
			}
		}
		fl.ByState[ps]++
		fl.ByStatus[op]++
		if in := h.Intents; in != nil {
			for _, k := range []struct {
				kind string
				i    *wire.Intent
			}{{wire.IntentDetach, in.Detach}, {wire.IntentDrain, in.Drain}, {wire.IntentResume, in.Resume},
				{wire.IntentReboot, in.Reboot}, {wire.IntentInspect, in.Inspect}, {wire.IntentService, in.Service}} {
				if k.i != nil && !k.i.Acknowledged {
					fl.Pending = append(fl.Pending, PendingIntent{Host: h.Name, Rack: h.Rack, Kind: k.kind, CreatedIndex: k.i.CreatedIndex})
				}
			}
			for _, it := range in.PowerOff {
				if !it.Acknowledged {
					fl.Pending = append(fl.Pending, PendingIntent{Host: h.Name, Rack: h.Rack, Kind: wire.IntentPowerOff, CreatedIndex: it.CreatedIndex})
				}
			}
			if d := in.Detach; d != nil && h.pivotedTo() == "" && strings.HasPrefix(d.Reason, pivotReason) {
				fl.Pivots = append(fl.Pivots, PivotInFlight{Host: h.Name, Side: PivotSource, Since: d.CreatedIndex})
			}
		}
		if h.task() != nil {
			fl.Tasks = append(fl.Tasks, *h.task())
		}
		if hf := h.handoff(); hf != nil && !adopted(h.Status) {
			fl.Pivots = append(fl.Pivots, PivotInFlight{Host: h.Name, Side: PivotDestination, Since: hf.DetachIndex})
		}
	}
	return fl
}

// sortedFleet orders Fleet's lists (they come in map order).
func sortedFleet(fl Fleet) Fleet {
	slices.SortFunc(fl.Pending, func(a, b PendingIntent) int {
		return cmp.Or(strings.Compare(a.Host, b.Host), strings.Compare(a.Kind, b.Kind), cmp.Compare(a.CreatedIndex, b.CreatedIndex))
	})
	slices.SortFunc(fl.Pivots, func(a, b PivotInFlight) int {
		return cmp.Or(strings.Compare(a.Host, b.Host), strings.Compare(a.Side, b.Side))
	})
	slices.SortFunc(fl.Tasks, func(a, b wire.BMCTask) int {
		return cmp.Or(strings.Compare(a.TaskURI, b.TaskURI), cmp.Compare(a.CreatedIndex, b.CreatedIndex), strings.Compare(a.Kind, b.Kind))
	})
	fl.Racks, fl.Leases = nil, 0
	return fl
}

// fleetGen draws commands that mostly apply against f's current state:
// hosts created, deleted and recreated in another rack, statuses, touches,
// acks, intents of every kind, BMC tasks, pivots out and handoffs in.
type fleetGen struct {
	r *rand.Rand
	f *FSM
}

func (g fleetGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g fleetGen) cmd() Command {
	name := fmt.Sprintf("h%d", g.r.IntN(12))
	rack := fmt.Sprintf("r%d", g.r.IntN(3))
	g.f.mu.RLock()
	old := g.f.s.Hosts[name]
	var epoch, created, modified uint64
	var intents []wire.IntentAck
	if old != nil {
		rack = old.Rack
		created, modified = old.CreatedIndex, old.ModifiedIndex
		if in := old.Intents; in != nil {
			for _, k := range []struct {
				kind string
				i    *wire.Intent
			}{{wire.IntentDetach, in.Detach}, {wire.IntentDrain, in.Drain}, {wire.IntentReboot, in.Reboot}, {wire.IntentService, in.Service}} {
				if k.i != nil {
					intents = append(intents, wire.IntentAck{Kind: k.kind, CreatedIndex: k.i.CreatedIndex, Drop: g.r.IntN(4) == 0})
				}
			}
		}
	}
	if r := g.f.s.Racks[rack]; r != nil && r.Lease != nil {
		epoch = r.Lease.Epoch
	}
	g.f.mu.RUnlock()
	switch g.r.IntN(14) {
	case 0, 1:
		h := host(name, rack)
		if old == nil && g.r.IntN(3) == 0 {
			h.Handoff = &wire.Handoff{SourceTier: "b", SourceClusterID: "cb", DetachIndex: uint64(g.r.IntN(50)) + 1, Confirmed: g.r.IntN(2) == 0}
		}
		return PutHostCmd{Host: h, Time: t0}
	case 2:
		return DeleteHostCmd{Name: name, Force: g.r.IntN(2) == 0, TaskFence: g.r.IntN(2) == 0, Time: t0}
	case 3:
		if epoch != 0 && g.r.IntN(2) == 0 {
			return LeaseExpireCmd{Rack: rack, Epoch: epoch, Time: t0}
		}
		return LeaseAcquireCmd{Rack: rack, Holder: "a-" + rack, TTL: time.Minute, Time: t0}
	case 4, 5, 6:
		st := wire.HostStatus{ProvisioningState: g.pick("", wire.StateAvailable, wire.StateProvisioned, wire.StateExternallyProvisioned, "inspecting"),
			OperationalStatus: g.pick("", wire.OpOK, wire.OpError, "detached"), ErrorType: g.pick("", "inspection", "power")}
		rep := wire.RackHostReport{Name: name, Created: created, Status: &st}
		switch g.r.IntN(6) {
		case 0:
			rep = wire.RackHostReport{Name: name, Touch: modified}
		case 1:
			rep.Remove = true
		case 2, 3:
			rep.Acks = intents
		}
		return RackStatusCmd{Rack: rack, Epoch: epoch, Time: t0, Hosts: []wire.RackHostReport{rep}}
	case 7, 8:
		reason := g.pick("", "maintenance", pivotReason+"b")
		return PutIntentCmd{Name: name, Kind: g.pick(wire.IntentDetach, wire.IntentDrain, wire.IntentResume), Intent: wire.Intent{Reason: reason, Force: g.r.IntN(2) == 0}, Time: t0}
	case 9:
		return DeleteIntentCmd{Name: name, Kind: g.pick(wire.IntentDetach, wire.IntentDrain, wire.IntentResume)}
	case 10:
		kind := g.pick(wire.IntentReboot, wire.IntentPowerOff, wire.IntentService)
		return PutOperationIntentCmd{Name: name, Kind: kind, Intent: wire.Intent{Mode: wire.RebootSoft, Requester: g.pick("a", "b")}}
	case 11:
		return DeleteOperationIntentCmd{Name: name, Kind: g.pick(wire.IntentReboot, wire.IntentPowerOff, wire.IntentService), Requester: g.pick("a", "b")}
	case 12:
		if g.r.IntN(2) == 0 {
			return BMCTaskCmd{Rack: rack, Name: name, Time: t0, End: &wire.BMCTaskEnd{Epoch: epoch, Outcome: wire.BMCTaskSucceeded}}
		}
		return BMCTaskCmd{Rack: rack, Name: name, Time: t0, Start: &wire.BMCTaskRequest{Epoch: epoch, CreatedIndex: created,
			Kind: g.pick(wire.BMCTaskKinds...), TaskURI: fmt.Sprintf("/redfish/v1/TaskService/Tasks/%d", g.r.IntN(100))}}
	default:
		return SetPivotedCmd{Name: name, To: "b", DeleteSource: g.r.IntN(3) == 0}
	}
}

// TestFleetCountsMatchRecount applies random command sequences (single
// and batched entries) and, after each entry and after a snapshot
// restore, compares the counts Apply keeps with a full recount.
func TestFleetCountsMatchRecount(t *testing.T) {
	applied := 0
	for seed := uint64(1); seed <= 20; seed++ {
		f := NewFSM()
		g := fleetGen{r: rand.New(rand.NewPCG(seed, 40)), f: f}
		idx := uint64(0)
		check := func(what string) {
			t.Helper()
			if got, want := sortedFleet(f.Fleet()), sortedFleet(recountFleet(f)); !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d, %s at index %d: Fleet()\n%+v\nwant (full recount)\n%+v", seed, what, idx, got, want)
			}
		}
		for step := 0; step < 400; step++ {
			var data []byte
			var err error
			if g.r.IntN(5) == 0 {
				var parts [][]byte
				for range 1 + g.r.IntN(4) {
					p, err := Encode(g.cmd())
					if err != nil {
						t.Fatal(err)
					}
					parts = append(parts, p)
				}
				data = EncodeBatch(parts)
			} else if data, err = Encode(g.cmd()); err != nil {
				t.Fatal(err)
			}
			idx++
			for _, r := range results(f.Apply(idx, data)) {
				if r.Err == nil {
					applied++
				}
			}
			check("after an entry")
			if step%97 == 96 {
				snap, err := f.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				var buf bytes.Buffer
				if err := snap.Encode(&buf); err != nil {
					t.Fatal(err)
				}
				want := sortedFleet(f.Fleet())
				g.f = NewFSM()
				g.f.Apply(1, encodeFleetCmd(t, PutHostCmd{Host: host("stale", "r9"), Time: t0}))
				if err := g.f.Restore(&buf); err != nil {
					t.Fatal(err)
				}
				f = g.f
				idx = f.AppliedIndex()
				if got := sortedFleet(f.Fleet()); !reflect.DeepEqual(got, want) {
					t.Fatalf("seed %d: after restore Fleet()\n%+v\nwant (before the snapshot)\n%+v", seed, got, want)
				}
				check("after restore")
			}
		}
	}
	if applied < 2000 {
		t.Fatalf("only %d commands applied: the generator no longer exercises the counts", applied)
	}
}

func results(out any) []Result {
	if rs, ok := out.([]Result); ok {
		return rs
	}
	return []Result{out.(Result)}
}

func encodeFleetCmd(t *testing.T, c Command) []byte {
	t.Helper()
	d, err := Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
