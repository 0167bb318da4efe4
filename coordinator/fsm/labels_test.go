package fsm

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"fmt"
	"reflect"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

func TestLabelsStoredAndSelected(t *testing.T) {
	h := newFSMT(t)
	a := host("h1", "r1")
	a.Labels = map[string]string{"role": "compute", "zone": "a"}
	r := h.ok(PutHostCmd{Host: a, Time: t0}).(PutHostResult)
	if !reflect.DeepEqual(r.Host.Labels, a.Labels) || r.Host.SpecIndex != 1 {
		t.Fatalf("create with labels: %+v", r.Host)
	}
	b := host("h2", "r1")
	b.Labels = map[string]string{"role": "storage"}
	h.ok(PutHostCmd{Host: b, Time: t0})
	h.ok(PutHostCmd{Host: host("h3", "r2"), Time: t0})

	names := func(sel string, rack string) []string {
		s, err := wire.ParseSelector(sel)
		if err != nil {
			t.Fatal(err)
		}
		hs, _ := h.f.HostsSelected(rack, "", s)
		out := []string{}
		for _, x := range hs {
			out = append(out, x.Name)
		}
		return out
	}
	for _, tc := range []struct {
		sel, rack string
		want      []string
	}{
		{"", "", []string{"h1", "h2", "h3"}},
		{"role=compute", "", []string{"h1"}},
		{"role!=compute", "", []string{"h2", "h3"}},
		{"role", "", []string{"h1", "h2"}},
		{"!role", "", []string{"h3"}},
		{"role in (compute,storage),zone notin (b)", "", []string{"h1", "h2"}},
		{"!role", "r1", []string{}},
	} {
		if got := names(tc.sel, tc.rack); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("selector %q rack %q: %v, want %v", tc.sel, tc.rack, got, tc.want)
		}
	}

	// A change of labels alone is stored (new modifiedIndex) but keeps the
	// spec index: the agent does not act on labels.
	a.Labels = map[string]string{"role": "compute", "zone": "b"}
	r = h.ok(PutHostCmd{Host: a, Time: t0}).(PutHostResult)
	if r.Host.Labels["zone"] != "b" || r.Host.SpecIndex != 1 || r.Host.ModifiedIndex != h.index {
		t.Fatalf("labels-only change: %+v", r.Host)
	}
	// A real spec change moves it.
	a.Consumer = "job-1"
	r = h.ok(PutHostCmd{Host: a, Time: t0}).(PutHostResult)
	if r.Host.SpecIndex != h.index {
		t.Fatalf("spec change kept specIndex %d (index %d)", r.Host.SpecIndex, h.index)
	}
	// Empty labels and no labels are the same spec: no new record.
	c := host("h3", "r2")
	c.Labels = map[string]string{}
	before, _ := h.f.Host("h3")
	r = h.ok(PutHostCmd{Host: c, Time: t0}).(PutHostResult)
	if r.Host.ModifiedIndex != before.ModifiedIndex || r.Host.Labels != nil {
		t.Fatalf("{} labels changed the host: %+v", r.Host)
	}
	// The stored map is the FSM's own: changing the command's map later
	// does not reach the record.
	a.Labels["zone"] = "mutated"
	if got, _ := h.f.Host("h1"); got.Labels["zone"] != "b" {
		t.Fatalf("stored labels share the caller's map: %v", got.Labels)
	}
}

// Log entries written before labels existed carry no "labels" key; they
// must decode and apply as hosts without labels.
func TestOldPutHostEntryDecodes(t *testing.T) {
	old := []byte(`{"host":{"name":"h1","rack":"r1","bmc":{"address":"redfish+http://127.0.0.1:9001/redfish/v1/Systems/1","credentials":"c1"},"online":true,"consumer":""},"time":"2026-01-02T03:04:05Z"}`)
	c, err := Decode(append([]byte{byte(CmdPutHost), bodyVersion}, old...))
	if err != nil {
		t.Fatal(err)
	}
	h := newFSMT(t)
	h.ok(c)
	got, _ := h.f.Host("h1")
	if got.Labels != nil {
		t.Fatalf("labels from nowhere: %v", got.Labels)
	}
	sel, _ := wire.ParseSelector("!role")
	if hs, _ := h.f.HostsSelected("", "", sel); len(hs) != 1 {
		t.Fatalf("old host not selected by !role: %v", hs)
	}
}

// Snapshots written before labels existed: version 2 chunks are gob
// streams of hostRec; gob matches fields by name, so a record encoded from
// the old type (no Labels) must decode into today's hostRec.
func TestOldSnapshotChunkDecodes(t *testing.T) {
	type oldHost struct { // api.Host as it was, in part: gob ignores the rest
		Name, Rack string
		BMC        wire.BMC
		Online     bool
		Status     *wire.HostStatus
	}
	type oldRec struct {
		Host   oldHost
		Events []wire.Event
	}
	var chunk bytes.Buffer
	enc := gob.NewEncoder(&chunk)
	for _, n := range []string{"h1", "h2"} {
		if err := enc.Encode(&oldRec{Host: oldHost{Name: n, Rack: "r1", Online: true,
			Status: &wire.HostStatus{ProvisioningState: wire.StateAvailable}}}); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	buf.Write(binary.AppendUvarint(nil, uint64(chunk.Len())))
	buf.Write(chunk.Bytes())
	hosts, err := readChunks(bufio.NewReader(&buf), 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hosts {
		if h.Rack != "r1" || h.labels() != nil || h.Status == nil || h.Status.ProvisioningState != wire.StateAvailable {
			t.Fatalf("old record decoded as %+v", h.host())
		}
	}
	// And today's records keep their labels through a snapshot.
	f := newFSMT(t)
	x := host("h1", "r1")
	x.Labels = map[string]string{"example.com/role": "compute"}
	f.ok(PutHostCmd{Host: x, Time: t0})
	var snap bytes.Buffer
	if err := f.f.snapshot().Encode(&snap); err != nil {
		t.Fatal(err)
	}
	g := NewFSM()
	if err := g.Restore(&snap); err != nil {
		t.Fatal(err)
	}
	if got, _ := g.Host("h1"); !reflect.DeepEqual(got.Labels, x.Labels) {
		t.Fatalf("labels after restore: %v", got.Labels)
	}
}

// BenchmarkHostsSelected: GET /v1/hosts?selector= over 10,000 hosts, a
// quarter of them matching (the FSM part only: no HTTP, no JSON).
//
//	go test -run XXX -bench HostsSelected ./coordinator/fsm/
func BenchmarkHostsSelected(b *testing.B) {
	f := NewFSM()
	h := &fsmT{f: f}
	roles := []string{"compute", "storage", "spare", "gpu"}
	for i := 0; i < 10000; i++ {
		x := host(fmt.Sprintf("h%05d", i), fmt.Sprintf("r%02d", i%40))
		x.Labels = map[string]string{"role": roles[i%4], "zone": string(rune('a' + i%3))}
		b2, _ := Encode(PutHostCmd{Host: x, Time: t0})
		h.index++
		f.Apply(h.index, b2)
	}
	for _, s := range []string{"", "role=compute", "role=compute,zone in (a,b)", "role notin (spare,gpu),!maint"} {
		sel, err := wire.ParseSelector(s)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%q", s), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				hs, _ := f.HostsSelected("", "", sel)
				if len(hs) == 0 {
					b.Fatal("nothing selected")
				}
			}
		})
	}
}
