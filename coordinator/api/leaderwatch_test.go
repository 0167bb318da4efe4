package api

import (
	"sync/atomic"
	"testing"
	"time"
)

// A forward's watch fires once when the leader it was sent to is no
// longer this member's leader, never while it leads, and not after the
// forward ended.
func TestLeaderWatch(t *testing.T) {
	var cur atomic.Value
	cur.Store("https://a")
	w := newLeaderWatch(func() string { return cur.Load().(string) }, time.Millisecond)
	movedA := make(chan struct{}, 2)
	stopA := w.watch("https://a", func() { movedA <- struct{}{} })
	defer stopA()
	var stoppedFired atomic.Bool
	stopB := w.watch("https://a", func() { stoppedFired.Store(true) })
	stopB()
	time.Sleep(20 * time.Millisecond)
	select {
	case <-movedA:
		t.Fatal("fired while the leader had not moved")
	default:
	}
	cur.Store("") // an election began
	select {
	case <-movedA:
	case <-time.After(30 * time.Second):
		t.Fatal("did not fire after the leader moved")
	}
	time.Sleep(20 * time.Millisecond)
	if len(movedA) != 0 || stoppedFired.Load() {
		t.Errorf("fired again (%d) or after its forward ended (%v)", len(movedA), stoppedFired.Load())
	}
	// A new forward after the poller stopped starts it again.
	movedC := make(chan struct{}, 1)
	defer w.watch("https://b", func() { movedC <- struct{}{} })()
	select {
	case <-movedC:
	case <-time.After(30 * time.Second):
		t.Fatal("a watch started after the poller stopped never fired")
	}
}
