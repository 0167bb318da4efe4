package fsm

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestStateHashAtSameIndexes: two FSMs fed the same log hash at the same
// indexes with the same sums; one changed behind the log's back hashes
// differently at the next boundary; a restore from a snapshot shifts no
// boundary.
func TestStateHashAtSameIndexes(t *testing.T) {
	mk := func() *fsmT {
		h := newFSMT(t)
		h.f.hashes = newHasher(4)
		h.f.hashes.sync = true
		return h
	}
	a, b := mk(), mk()
	for i := 0; i < 10; i++ {
		for _, h := range []*fsmT{a, b} {
			h.ok(PutHostCmd{Host: host(fmt.Sprintf("h%d", i), "r1")})
		}
	}
	ha, hb := a.f.StateHashes(), b.f.StateHashes()
	if len(ha) != 2 || ha[0].Index != 4 || ha[1].Index != 8 || fmt.Sprint(ha) != fmt.Sprint(hb) {
		t.Fatalf("hashes a %v b %v", ha, hb)
	}
	if ha[0].Sum == ha[1].Sum {
		t.Fatal("different states, same sum")
	}
	// A snapshot restored into a third FSM hashes the same after the same entries.
	var buf bytes.Buffer
	if err := a.f.snapshot().Encode(&buf); err != nil {
		t.Fatal(err)
	}
	c := mk()
	if err := c.f.Restore(&buf); err != nil {
		t.Fatal(err)
	}
	c.index = a.index
	if !b.f.corruptHost("h3", "someone") {
		t.Fatal("corrupt")
	}
	for i := 10; i < 13; i++ {
		for _, h := range []*fsmT{a, b, c} {
			h.ok(PutHostCmd{Host: host(fmt.Sprintf("h%d", i), "r1")})
		}
	}
	la, lb, lc := last(a), last(b), last(c)
	if la.Index != 12 || lc != la {
		t.Fatalf("after restore: a %v c %v", la, lc)
	}
	if lb.Index != 12 || lb.Sum == la.Sum {
		t.Fatalf("a corrupted FSM hashes like the others: a %v b %v", la, lb)
	}
}

func last(h *fsmT) StateHash {
	hs := h.f.StateHashes()
	return hs[len(hs)-1]
}

// BenchmarkStateHash is the cost of one state hash at fleet sizes, hosts
// with a status and hardware details: capture is what the apply path pays
// (under the FSM lock, every HashEvery entries), sum the hashing after it.
//
//	go test -run '^$' -bench StateHash -benchmem ./coordinator
func BenchmarkStateHash(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		f := benchFSM(n)
		b.Run(fmt.Sprintf("capture/hosts=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				f.mu.Lock()
				_ = f.snapshotLocked()
				f.mu.Unlock()
			}
		})
		b.Run(fmt.Sprintf("sum/hosts=%d", n), func(b *testing.B) {
			snap := f.snapshot()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_ = snap.sum()
			}
		})
	}
}

func benchFSM(n int) *FSM {
	f := NewFSM()
	hw := &wire.HardwareDetails{Manufacturer: "Acme", Model: "R640", SerialNumber: "SN123", BIOSVersion: "2.1",
		CPUs: []wire.CPU{{Model: "Xeon", Cores: 16, Threads: 32}, {Model: "Xeon", Cores: 16, Threads: 32}}, MemoryMiB: 262144,
		NICs:  []wire.NIC{{Name: "eno1", MAC: "52:54:00:00:00:01", SpeedMbps: 25000}, {Name: "eno2", MAC: "52:54:00:00:00:02", SpeedMbps: 25000}},
		Disks: []wire.Disk{{Name: "sda", Model: "SSD", SizeBytes: 960e9, Type: "SSD"}, {Name: "sdb", Model: "SSD", SizeBytes: 960e9, Type: "SSD"}}}
	for i := 0; i < n; i++ {
		x := host(fmt.Sprintf("h%06d", i), fmt.Sprintf("r%d", i%50))
		c, _ := Encode(PutHostCmd{Host: x, Time: t0})
		f.Apply(uint64(i+1), c)
		h := *f.s.Hosts[x.Name]
		h.Status = &wire.HostStatus{ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpOK, PoweredOn: true,
			HardwareDetails: hw, LastUpdated: t0, Epoch: 7}
		f.s.Hosts[x.Name] = &h
	}
	return f
}

// TestStateHashValueIsStable: the hash of a fixed state is the value every
// binary since the hash existed computes for it. Members running different
// binaries compare hashes during a rolling upgrade (coordinator/divergence.go), so a
// change here (a field renamed, an order changed) would raise a false
// divergence alarm on every mixed cluster: keep the value, or make the
// change wait for a hash format version.
func TestStateHashValueIsStable(t *testing.T) {
	const want = "82126d7a645119de510e152059529c66a6d2708c58ced32d8b50183aebb1e369" // commit 78edc4d
	if got := fullState(t).f.snapshot().sum(); got != want {
		t.Fatalf("state hash of fullState is %s, want %s", got, want)
	}
}

// TestStateHashIntervalGrowsWithFleet: above stepHosts the interval
// doubles with the fleet, the same on every member fed the same log, and
// a member hashing at the base interval (an older binary) shares each of
// the scaled indexes with the same sum.
func TestStateHashIntervalGrowsWithFleet(t *testing.T) {
	mk := func(step int) *fsmT {
		h := newFSMT(t)
		h.f.hashes = newHasher(4)
		h.f.hashes.stepHosts = step
		h.f.hashes.sync = true
		return h
	}
	a, b, old := mk(8), mk(8), mk(1<<30)
	base := map[uint64]string{}
	for i := 0; i < 40; i++ {
		for _, h := range []*fsmT{a, b, old} {
			h.ok(PutHostCmd{Host: host(fmt.Sprintf("h%02d", i), "r1")})
		}
		if hs := old.f.StateHashes(); len(hs) > 0 && hs[len(hs)-1].Index == uint64(i+1) {
			base[uint64(i+1)] = hs[len(hs)-1].Sum
		}
	}
	var got []uint64
	for _, s := range a.f.StateHashes() {
		got = append(got, s.Index)
		if base[s.Index] != s.Sum {
			t.Errorf("index %d: scaled member %s, base-interval member %q", s.Index, s.Sum, base[s.Index])
		}
	}
	// hosts ≤ 8: every 4 (4, 8); ≤ 16: every 8 (16); ≤ 32: every 16 (32);
	// 33–40: every 32, no boundary crossed.
	if fmt.Sprint(got) != "[4 8 16 32]" {
		t.Fatalf("scaled member hashed at %v, want [4 8 16 32]", got)
	}
	if fmt.Sprint(a.f.StateHashes()) != fmt.Sprint(b.f.StateHashes()) {
		t.Fatalf("members fed the same log differ: %v / %v", a.f.StateHashes(), b.f.StateHashes())
	}
	if len(base) != 10 {
		t.Fatalf("base-interval member hashed %d times, want 10 (every 4 of 40)", len(base))
	}
}

func TestHashIntervalBounded(t *testing.T) {
	h := newHasher(DefaultHashEvery)
	for _, c := range []struct {
		hosts int
		want  uint64
	}{{0, 1024}, {16384, 1024}, {16385, 2048}, {100000, 8192}, {1 << 30, 64 * 1024}} {
		if got := h.interval(c.hosts); got != c.want {
			t.Errorf("interval(%d) = %d, want %d", c.hosts, got, c.want)
		}
	}
	if got := newHasher(1 << 62).interval(1 << 30); got != 1<<63 {
		t.Errorf("a huge HashEvery doubles without overflow: got %d", got)
	}
}
