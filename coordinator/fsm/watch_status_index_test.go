package fsm

import (
	"bytes"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// statuslessRack is a rack r1 with hosts h1, h2 and a lease; it returns the
// lease epoch.
func statuslessRack(t *testing.T) (*fsmT, uint64) {
	h := newFSMT(t)
	h.ok(PutHostCmd{Host: host("h1", "r1")})
	h.ok(PutHostCmd{Host: host("h2", "r1")})
	return h, h.ok(LeaseAcquireCmd{Rack: "r1", Holder: "a", TTL: 10 * time.Second, Time: t0}).(wire.Lease).Epoch
}

func okStatus() *wire.HostStatus {
	return &wire.HostStatus{ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpOK, PoweredOn: true}
}

// A write of statuses alone (per rack, with events, or per host) answers a
// watch with statuses but not a status-less one.
func TestStatusOnlyWriteAnswersNoStatuslessWatch(t *testing.T) {
	h, ep := statuslessRack(t)
	at := h.index
	h.ok(RackStatusCmd{Rack: "r1", Epoch: ep, Time: t0, Hosts: []wire.RackHostReport{
		{Name: "h1", Status: okStatus(), Events: []wire.Event{{Reason: "Registered", Message: "m"}}},
		{Name: "h2", Status: okStatus()},
	}})
	h.ok(StatusCmd{Rack: "r1", Name: "h1", Report: wire.StatusReport{Epoch: ep, Status: *okStatus()}, Time: t0})
	if resp, ok := h.f.changes("r1", at); !ok || len(resp.Hosts) != 2 {
		t.Fatalf("a watch with statuses: changed=%v %+v", ok, resp)
	}
	if resp, ok := h.f.changesOf("r1", at, false); ok || len(resp.Hosts) != 0 || resp.Lease == nil {
		t.Fatalf("status writes answered a status-less watch: changed=%v %+v", ok, resp)
	}
	// A status-less watch still sees what came before them.
	if _, ok := h.f.changesOf("r1", at-1, false); !ok {
		t.Fatal("the lease acquired before the status writes did not answer a status-less watch from before it")
	}
}

// Anything else in an entry, alone or in a batch with status writes (in
// either order), answers a status-less watch.
func TestStatuslessWatchSeesOtherChanges(t *testing.T) {
	cases := map[string]func(ep uint64, created uint64) Command{
		"ack": func(ep, created uint64) Command {
			return StatusCmd{Rack: "r1", Name: "h2", Time: t0, Report: wire.StatusReport{Epoch: ep, Status: *okStatus(),
				Acks: []wire.IntentAck{{Kind: wire.IntentDetach, CreatedIndex: created}}}}
		},
		"removal": func(ep, _ uint64) Command {
			return RackStatusCmd{Rack: "r1", Epoch: ep, Time: t0, Hosts: []wire.RackHostReport{{Name: "h2", Remove: true}}}
		},
		"spec change": func(_, _ uint64) Command {
			hs := host("h2", "r1")
			hs.Labels = map[string]string{"a": "b"}
			return PutHostCmd{Host: hs}
		},
		"deletion": func(_, _ uint64) Command { return DeleteHostCmd{Name: "h2"} },
		"lease TTL change": func(ep, _ uint64) Command {
			return LeaseRenewCmd{Rack: "r1", Holder: "a", Epoch: ep, TTL: 20 * time.Second}
		},
	}
	for name, mk := range cases {
		for _, mode := range []string{"alone", "status first", "status last"} {
			h, ep := statuslessRack(t)
			h.ok(PutIntentCmd{Name: "h2", Kind: wire.IntentDetach})
			created := h.index
			at := h.index
			status := RackStatusCmd{Rack: "r1", Epoch: ep, Time: t0, Hosts: []wire.RackHostReport{{Name: "h1", Status: okStatus()}}}
			var cmds []Command
			switch mode {
			case "alone":
				cmds = []Command{mk(ep, created)}
			case "status first":
				cmds = []Command{status, mk(ep, created)}
			default:
				cmds = []Command{mk(ep, created), status}
			}
			for _, r := range h.applyBatch(cmds...) {
				if r.Err != nil {
					t.Fatalf("%s %s: %v", name, mode, r.Err)
				}
			}
			if resp, ok := h.f.changesOf("r1", at, false); !ok {
				t.Errorf("%s (%s) did not answer a status-less watch: %+v", name, mode, resp)
			}
		}
	}
}

// After a snapshot restore the status-less index is not known: a watcher
// from before the snapshot's changes is answered, the next status write
// answers a status-less watch (woken for nothing, never left asleep), and
// after the rack's next other change status writes do not.
func TestStatuslessWatchAfterRestoreIsConservative(t *testing.T) {
	h, ep := statuslessRack(t)
	var buf bytes.Buffer
	if err := h.f.snapshot().Encode(&buf); err != nil {
		t.Fatal(err)
	}
	// g saw the rack's first host only, then installs the snapshot.
	g := newFSMT(t)
	g.ok(PutHostCmd{Host: host("h1", "r1")})
	early := g.index
	if err := g.f.Restore(&buf); err != nil {
		t.Fatal(err)
	}
	g.index = h.index
	if resp, ok := g.f.changesOf("r1", early, false); !ok || len(resp.Hosts) != 1 || resp.Hosts[0].Name != "h2" {
		t.Fatalf("after a restore a status-less watch missed the snapshot's changes: changed=%v %+v", ok, resp)
	}
	at := g.index
	g.ok(RackStatusCmd{Rack: "r1", Epoch: ep, Time: t0, Hosts: []wire.RackHostReport{{Name: "h1", Status: okStatus()}}})
	if _, ok := g.f.changesOf("r1", at, false); !ok {
		t.Fatal("after a restore a status write did not answer a status-less watch")
	}
	g.ok(PutIntentCmd{Name: "h2", Kind: wire.IntentDetach})
	at = g.index
	g.ok(RackStatusCmd{Rack: "r1", Epoch: ep, Time: t0, Hosts: []wire.RackHostReport{{Name: "h1", Status: okStatus()}}})
	if _, ok := g.f.changesOf("r1", at, false); ok {
		t.Fatal("after a restore and an intent, a status write answered a status-less watch")
	}
}
