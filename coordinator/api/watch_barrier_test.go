package api

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSharedBarrier: callers that come while a barrier runs share the
// next one, which starts only after the running one ended; nobody shares
// a barrier that started before it came.
func TestSharedBarrier(t *testing.T) {
	var b sharedBarrier
	var runs atomic.Int32
	release := make(chan struct{})
	started := make(chan int32, 4)
	fn := func(context.Context) error {
		n := runs.Add(1)
		started <- n
		<-release
		return nil
	}
	var wg sync.WaitGroup
	call := func() { defer wg.Done(); _ = b.do(context.Background(), fn) }
	wg.Add(1)
	go call()
	if n := <-started; n != 1 {
		t.Fatalf("first run is %d", n)
	}
	for i := 0; i < 10; i++ { // they came while run 1 runs: they wait for run 2
		wg.Add(1)
		go call()
	}
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) { // all ten gathered into the next
		b.mu.Lock()
		gathered := b.next != nil && b.next.callers == 10
		b.mu.Unlock()
		if gathered {
			break
		}
		if time.Now().After(end) {
			t.Fatal("ten callers not gathered into the next barrier within 30 s")
		}
	}
	close(release)
	wg.Wait()
	if n := runs.Load(); n != 2 {
		t.Fatalf("%d barriers for 11 callers, 10 of them while the first ran: want 2", n)
	}
}
