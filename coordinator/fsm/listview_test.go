package fsm

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// viewNames is v's hosts' names in v's order, each checked to be the
// record the FSM holds now (the view is current, not an older record).
func viewNames(t *testing.T, f *FSM, v *HostsView) []string {
	t.Helper()
	var out []string
	for i := range v.Len() {
		h := v.At(i)
		if now, _ := f.Host(h.Name); now.ModifiedIndex != h.ModifiedIndex || now.Status != h.Status {
			t.Fatalf("view at %d holds an older record of %s (modifiedIndex %d, now %d)", v.Index, h.Name, h.ModifiedIndex, now.ModifiedIndex)
		}
		out = append(out, h.Name)
	}
	return out
}

// TestHostsViewCurrentAndSorted: a view of every host and of a rack is
// sorted by name and holds the current records, whether the hosts changed
// status since the last view (its order is reused), hosts were added or
// deleted (sorted again), or another rack was viewed in between.
func TestHostsViewCurrentAndSorted(t *testing.T) {
	f := fleetFSM(t, 300, 100)
	apply := packedApplier(t, f, nil)
	want := func(rack string, names []string) {
		t.Helper()
		got := viewNames(t, f, f.HostsView(rack))
		if !slices.Equal(got, names) {
			t.Fatalf("view of rack %q: %d hosts %v…, want %d %v…", rack, len(got), got[:min(3, len(got))], len(names), names[:min(3, len(names))])
		}
	}
	all, r1 := []string{}, []string{}
	for i := range 300 {
		all = append(all, fmt.Sprintf("h%06d", i))
		if i >= 100 && i < 200 {
			r1 = append(r1, fmt.Sprintf("h%06d", i))
		}
	}
	want("", all)
	want("r001", r1)
	// Statuses change (a touch-free full report of rack r001): the order is reused.
	epoch := apply(LeaseAcquireCmd{Rack: "r001", Holder: "agent-r001", TTL: time.Minute, Time: t0}).(wire.Lease).Epoch
	c := RackStatusCmd{Rack: "r001", Epoch: epoch, Time: t0.Add(time.Hour)}
	for i := 100; i < 200; i++ {
		c.Hosts = append(c.Hosts, fleetStatus(i, 2, t0.Add(time.Hour)))
	}
	apply(c)
	want("", all)
	want("r001", r1)
	// Hosts added (sorting before the others), then one of them deleted
	// (a host with no status is removed at once).
	put := func(name string) {
		apply(PutHostCmd{Host: wire.Host{Name: name, Rack: "r001", BMC: wire.BMC{Address: "redfish://10.0.0.1", Credentials: "bmc"}}})
	}
	put("a-first")
	put("a-second")
	apply(DeleteHostCmd{Name: "a-second"})
	all = append([]string{"a-first"}, all...)
	r1 = append([]string{"a-first"}, r1...)
	want("r000", all[1:101])
	want("r001", r1)
	want("", all)
	// One host deleted and another added: as many hosts as before, other names.
	apply(DeleteHostCmd{Name: "a-first"})
	put("h000150x")
	all = slices.Insert(all[1:], 151, "h000150x")
	r1 = slices.Insert(r1[1:], 51, "h000150x")
	want("", all)
	want("r001", r1)
	if !slices.IsSortedFunc(all, strings.Compare) {
		t.Fatal("the expected list itself is not sorted")
	}
}

// BenchmarkHostsView captures the view a host list's first page answers
// from, of 10,000 hosts (the same names as at the last view: its order
// is reused).
//
//	go test -run '^$' -bench HostsView -benchmem ./coordinator/fsm/
func BenchmarkHostsView(b *testing.B) {
	f := fleetFSM(b, 10000, 100)
	f.HostsView("")
	b.ReportAllocs()
	for b.Loop() {
		f.HostsView("")
	}
}
