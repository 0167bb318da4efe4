package api

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// blockedSource is a watch source where nothing changes: a round waits
// until its last watcher leaves it.
var blockedSource = watchSource{
	wait: func(ctx context.Context, _ watchKey, _ <-chan time.Time) (bool, error) {
		<-ctx.Done()
		return false, ctx.Err()
	},
	answer: changedSource.answer,
}

// TestWatchHandBackFollowsStreams: a crowd of streamed watchers leaving
// their round all at once to write a line (as they do at every change)
// has not left: no hand-back of memory is scheduled then, in the middle
// of the writes. Once the streams close, one is.
func TestWatchHandBackFollowsStreams(t *testing.T) {
	h := newWatchHub(prometheus.NewRegistry())
	key := watchKey{rack: "r1", after: 5}
	const crowd = 2 * freeFrom
	for range crowd {
		h.stream(key, 1)
	}
	rounds := make([]*watchRound, crowd)
	for i := range rounds {
		rounds[i] = h.join(key, time.Hour, blockedSource)
	}
	for _, r := range rounds { // every watcher takes the answer and writes it
		h.leave(key, r)
	}
	freeing := func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.freeing
	}
	if freeing() {
		t.Fatalf("%d streams open, writing a line: a hand-back of memory was scheduled in the middle of their writes", crowd)
	}
	for range crowd {
		h.stream(key, -1)
	}
	if !freeing() {
		t.Fatalf("%d streams closed: no hand-back of memory scheduled", crowd)
	}
}

// stackSink keeps useStack's frames from being optimised away.
var stackSink byte

// useStack runs f about depth KiB deep in the stack.
//
//go:noinline
func useStack(depth int, f func()) {
	var buf [1024]byte
	buf[depth%len(buf)] = byte(depth)
	if depth > 0 {
		useStack(depth-1, f)
	} else {
		f()
	}
	stackSink += buf[(depth*7)%len(buf)]
}

// TestWatchReleaseResizesKeptStacks: after a crowd of goroutines with
// deep stacks (parked watch handlers) exited, the stacks the runtime keeps
// for reuse are given back by a hand-back (release), which a collection
// and returning free pages alone do not do. Measured with runtime/metrics
// in this process.
func TestWatchReleaseResizesKeptStacks(t *testing.T) {
	const crowd = 2000
	release := make(chan struct{})
	var parked, exited sync.WaitGroup
	for range crowd {
		parked.Add(1)
		exited.Add(1)
		go func() {
			defer exited.Done()
			useStack(12, func() { parked.Done(); <-release })
		}()
	}
	parked.Wait()
	runtime.GC() // new goroutines now start with the crowd's stack size
	close(release)
	exited.Wait()
	runtime.GC() // frees what is not kept for reuse
	before := readHeld().stacks
	h := newWatchHub(prometheus.NewRegistry())
	t0 := time.Now()
	h.release("test")
	took := time.Since(t0)
	after := readHeld().stacks
	t.Logf("goroutine stacks: %d KiB before the hand-back, %d KiB after; the hand-back took %s", before>>10, after>>10, took)
	kept := uint64(runtime.GOMAXPROCS(0)) * 63 * (16 << 10) // at most, per processor
	if before < kept/4 {
		t.Skipf("only %d KiB of stacks kept after the crowd (the runtime kept fewer than this test expects)", before>>10)
	}
	if after > before/2 {
		t.Fatalf("goroutine stacks: %d KiB after a crowd exited, %d KiB after the hand-back: want at most half", before>>10, after>>10)
	}
}
