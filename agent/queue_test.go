package agent

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/testenv"
)

func TestQueueDedupesAndRequeuesWhileProcessing(t *testing.T) {
	q := newQueue()
	q.add("a")
	q.add("a")
	q.add("b")
	if n := q.len(); n != 2 {
		t.Fatalf("queue holds %d names, want 2 (a added twice counts once)", n)
	}
	name, _ := q.get()
	if name != "a" {
		t.Fatalf("got %q first, want a (FIFO)", name)
	}
	q.add("a") // changed while a worker processes it
	if n := q.len(); n != 1 {
		t.Fatalf("a was queued again while processing: len %d, want 1 (only b)", n)
	}
	q.done("a")
	if n := q.len(); n != 2 {
		t.Fatalf("after done, a must be queued again: len %d, want 2", n)
	}
}

func TestQueueAddAfterKeepsEarliest(t *testing.T) {
	q := newQueue()
	q.addAfter("a", time.Hour)
	q.addAfter("a", 10*time.Millisecond)
	q.addAfter("a", time.Hour) // later: ignored
	got := make(chan string, 1)
	go func() {
		n, _ := q.get()
		got <- n
	}()
	select {
	case n := <-got:
		if n != "a" {
			t.Fatalf("got %q, want a", n)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the earliest delayed add never fired")
	}
}

func TestQueueNeverHandsOneNameToTwoWorkers(t *testing.T) {
	q := newQueue()
	var mu sync.Mutex
	busy := map[string]bool{}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n, ok := q.get()
				if !ok {
					return
				}
				mu.Lock()
				if busy[n] {
					mu.Unlock()
					t.Errorf("%s handed to two workers at once", n)
					return
				}
				busy[n] = true
				mu.Unlock()
				time.Sleep(time.Microsecond)
				mu.Lock()
				busy[n] = false
				mu.Unlock()
				q.done(n)
			}
		}()
	}
	for i := 0; i < 2000; i++ {
		q.add([]string{"a", "b", "c"}[i%3])
	}
	// Closed once every add was worked off: nothing queued, nothing handed
	// out and not yet done (the queue's own books, not the workers').
	testenv.Eventually(t, 30*time.Second, "the queue worked off", func() error {
		q.mu.Lock()
		defer q.mu.Unlock()
		if len(q.fifo) != 0 || len(q.processing) != 0 {
			return fmt.Errorf("%d queued, %d processing", len(q.fifo), len(q.processing))
		}
		return nil
	})
	q.close()
	wg.Wait()
}

func TestBackoffGrowsAndStaysBounded(t *testing.T) {
	b := newBackoff(100*time.Millisecond, time.Second)
	var last time.Duration
	for i := 0; i < 20; i++ {
		d := b.next()
		if d > time.Second || d < 50*time.Millisecond {
			t.Fatalf("wait %d is %s, outside [50ms, 1s]", i, d)
		}
		last = d
	}
	if last < 500*time.Millisecond {
		t.Fatalf("after 20 failures the wait is %s, want at least half the cap", last)
	}
}
