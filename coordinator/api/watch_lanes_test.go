package api

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestWriteLanesByConnection: watchers of a connection that writes join
// its lane at once, however many they are; a watcher of another
// connection waits while every lane is taken and writes once one is left
// by all its writers.
func TestWriteLanesByConnection(t *testing.T) {
	h := newWatchHub(prometheus.NewRegistry())
	ctx := context.Background()
	var held []*connLane
	conns := []string{"10.0.0.1:1000", "10.0.0.2:1000"}[:writeLanes]
	for _, c := range conns {
		l, err := h.enterLane(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
	}
	// More watchers of the first connection than there are lanes.
	entered := make(chan *connLane)
	for i := 0; i < 2*writeLanes; i++ {
		go func() {
			l, _ := h.enterLane(ctx, conns[0])
			entered <- l
		}()
	}
	for i := 0; i < 2*writeLanes; i++ {
		select {
		case l := <-entered:
			if l != held[0] {
				t.Fatal("a watcher of a connection writing entered a lane of its own")
			}
			held = append(held, l)
		case <-time.After(30 * time.Second):
			t.Fatalf("%d of %d more watchers of a connection writing entered its lane within 30 s", i, 2*writeLanes)
		}
	}
	other := make(chan *connLane)
	go func() {
		l, _ := h.enterLane(ctx, "10.0.0.9:1000")
		other <- l
	}()
	select {
	case <-other:
		t.Fatal("a watcher of a third connection wrote while every lane was taken")
	case <-time.After(100 * time.Millisecond):
	}
	for _, l := range held {
		if l == held[0] {
			h.exitLane(conns[0], l)
		}
	}
	select {
	case l := <-other:
		h.exitLane("10.0.0.9:1000", l)
	case <-time.After(30 * time.Second):
		t.Fatal("a watcher of a third connection did not write within 30 s of a lane being left")
	}
}
