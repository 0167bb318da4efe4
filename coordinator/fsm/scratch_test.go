package fsm

import (
	"testing"
	"time"
)

// TestInflatedBufferGivenBack: the buffer large compressed entries are
// inflated into is kept while such entries come, and given back once a
// window of entries needed far less (the steady traffic after hosts
// registered), instead of staying as large as the largest entry.
func TestInflatedBufferGivenBack(t *testing.T) {
	// 300 hosts in one rack: each rack report is one compressed entry of
	// a few hundred KB once inflated.
	f := packedFleetFSM(t, 300, 300, Compress)
	f.inflateMu.Lock()
	big := cap(f.inflated)
	f.inflateMu.Unlock()
	if big <= ScratchFloor {
		t.Fatalf("inflated buffer %d B after rack reports of 300 hosts: the test needs entries larger than %d B", big, ScratchFloor)
	}
	apply := packedApplier(t, f, Compress)
	epoch := f.s.Racks["r000"].Lease.Epoch
	for i := range 2 * ScratchWindow {
		apply(LeaseRenewCmd{Rack: "r000", Holder: "agent-r000", Epoch: epoch, TTL: time.Minute, Time: t0.Add(time.Duration(i) * time.Second)})
	}
	f.inflateMu.Lock()
	after := cap(f.inflated)
	f.inflateMu.Unlock()
	t.Logf("inflated buffer: %d B after the rack reports, %d B after %d small entries", big, after, 2*ScratchWindow)
	if after > ScratchFloor {
		t.Errorf("inflated buffer still %d B after %d entries of a few hundred bytes (at most %d B kept)", after, 2*ScratchWindow, ScratchFloor)
	}
}

// TestScratchKeep: a buffer is kept while a window's entries use at least
// half of it, dropped at the window's end otherwise, and never kept above
// MaxKept.
func TestScratchKeep(t *testing.T) {
	var k ScratchKeep
	const c = 1 << 20
	for i := range ScratchWindow - 1 {
		if !k.Keep(0, c) {
			t.Fatalf("dropped at entry %d, before the window's end", i)
		}
	}
	if k.Keep(0, c) {
		t.Fatal("a window of entries that used nothing kept 1 MiB")
	}
	for range ScratchWindow - 1 {
		k.Keep(10, c)
	}
	if !k.Keep(c/2, c) {
		t.Fatal("a window with an entry that used half the buffer dropped it")
	}
	for range ScratchWindow {
		if !k.Keep(0, ScratchFloor) {
			t.Fatal("dropped a buffer of ScratchFloor")
		}
	}
	if k.Keep(MaxKept+1, MaxKept+1) {
		t.Fatal("kept a buffer over MaxKept")
	}
}
