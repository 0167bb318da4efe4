package fsm

import (
	"bytes"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// goldenSnapshot is testdata/v2-snapshot-one-host.bin: the snapshot the
// code from before host entries (wire.Host records, wire.Event events)
// wrote of oneHostFSM's state.
const goldenSnapshot = "testdata/v2-snapshot-one-host.bin"

// oneHostFSM is a state of one host (a snapshot of more is in map order,
// as is a map of more than one key) with spec fields both common and
// rare, a status, intents and events at times in UTC and in another zone.
func oneHostFSM(t *testing.T) *FSM {
	h := newFSMT(t)
	x := host("h1", "r1")
	x.Image = &wire.Image{URL: "http://i/x.qcow2", Checksum: "sha256:ab", Format: "qcow2"}
	x.Labels = map[string]string{"role": "compute"}
	x.BootMode, x.UserData = wire.BootModeLegacy, &wire.SecretReference{Name: "ud"}
	x.Consumer = "team-a"
	h.ok(PutHostCmd{Host: x, Time: t0})
	ep := h.ok(LeaseAcquireCmd{Rack: "r1", Holder: "agent-r1", TTL: time.Minute, Time: t0}).(wire.Lease).Epoch
	rep := fleetStatus(1, 2, t0)
	rep.Name = "h1"
	// gob writes a map in its iteration order: maps of one key only.
	rep.Status.Health.Components = map[string]string{wire.HealthSystem: wire.HardwareOK}
	rep.Events = append(rep.Events, wire.Event{Time: t0.In(time.FixedZone("CET", 3600)), Type: wire.EventWarning,
		Reason: "Zoned", Message: "an event at a time in another zone", Source: "test"})
	h.ok(RackStatusCmd{Rack: "r1", Epoch: ep, Time: t0.Add(time.Second), Hosts: []wire.RackHostReport{rep}})
	h.ok(PutIntentCmd{Name: "h1", Kind: wire.IntentDetach, Intent: wire.Intent{Actor: "ops", Reason: "test"}, Time: t0})
	return h.f
}

// The same state gives the snapshot bytes it gave before host entries,
// and that snapshot restores to the same reads and state hash.
func TestSnapshotBytesUnchanged(t *testing.T) {
	f := oneHostFSM(t)
	var snap bytes.Buffer
	if err := f.snapshot().Encode(&snap); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("RACKFENCE_WRITE_GOLDEN") != "" {
		if err := os.WriteFile(goldenSnapshot, snap.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenSnapshot)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(snap.Bytes(), want) {
		t.Fatalf("the snapshot of the same state differs from %s (%d bytes, %d before)", goldenSnapshot, snap.Len(), len(want))
	}
	g := NewFSM()
	if err := g.Restore(bytes.NewReader(want)); err != nil {
		t.Fatal(err)
	}
	a, _ := f.Host("h1")
	b, _ := g.Host("h1")
	ea, _, _ := f.Events("h1")
	eb, _, _ := g.Events("h1")
	if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(ea, eb) || len(ea) != 2 {
		t.Fatalf("restored host differs:\n got %+v %+v\nwant %+v %+v", b, eb, a, ea)
	}
	if f.snapshot().sum() != g.snapshot().sum() {
		t.Fatal("the restored state hashes differently")
	}
}
