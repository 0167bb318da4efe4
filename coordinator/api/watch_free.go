package api

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// A crowd of watchers leaves memory behind: its handlers' goroutine stacks
// (kept for reuse by the runtime), pooled HTTP/2 writers, the kept rounds
// of its crowds, free heap pages. The hub follows the watchers present
// (long polls being answered, streams open) and, once they fell to a
// quarter of a peak of at least freeFrom, hands that memory back to the
// system freeAfter later, and once more freeAgain after that for the
// connections their clients closed late. A streamed watcher counts as
// present from its stream's opening to its end, also while it writes a
// line: counting only the watchers waiting in a round (as before) saw a
// streamed crowd "leave" at every line it wrote, handed memory back in
// the middle of the writes (a collection and a scavenge of the whole
// heap under the heap lock) and then, still busy with that hand-back when
// the crowd really left, skipped the one that mattered.

// noteWatchers follows the watchers present and schedules a hand-back when
// they fell to a quarter of their peak. The caller holds h.mu.
func (h *watchHub) noteWatchers() {
	n := h.polls + h.open
	h.peak = max(h.peak, n)
	if h.peak < freeFrom || n > h.peak/4 || h.freeing {
		return
	}
	low := h.peak / 4
	h.peak, h.freeing = n, true
	time.AfterFunc(freeAfter, func() { h.handBack(low) })
}

// poll counts a long poll being answered (d: +1 from its arrival, -1 once
// its answer is written).
func (h *watchHub) poll(d int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.polls += d
	h.noteWatchers()
}

// handBack gives the memory a crowd of watchers used back to the system,
// unless the watchers present rose above low again since it was
// scheduled (a long-poll crowd between two answers, a crowd coming back):
// then it waits for them to leave again.
func (h *watchHub) handBack(low int) {
	h.mu.Lock()
	if n := h.polls + h.open; n > low {
		h.freeing = false
		h.noteWatchers()
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	h.release("a crowd of watchers left")
	time.AfterFunc(freeAgain, func() {
		h.release("a crowd of watchers left, its late connections closed")
		h.mu.Lock()
		h.freeing = false
		h.mu.Unlock()
	})
}

// release drops the kept rounds nobody follows, makes the goroutine stacks
// kept for reuse the size new goroutines start with now, and collects
// twice before returning free pages to the system: the first collection
// moves what sync.Pools hold (the HTTP/2 server's pooled frame and
// response writers, about 4 KiB each, thousands after a crowd) to their
// victim caches, the second frees it, so the spans they kept in use are
// empty and go back too. It logs what it returned and what it cost.
func (h *watchHub) release(why string) {
	before := readHeld()
	t0 := time.Now()
	h.dropKept()
	recycleGoroutineStacks()
	runtime.GC()
	debug.FreeOSMemory()
	after := readHeld()
	h.handBacks.Inc()
	if h.log != nil {
		h.log.Info("watch memory handed back", "why", why, "took", time.Since(t0),
			"held_before_bytes", before.total, "held_after_bytes", after.total,
			"stacks_before_bytes", before.stacks, "stacks_after_bytes", after.stacks)
	}
}

// dropKept drops the kept rounds (keepRecent) of crowds no watcher
// follows now.
func (h *watchHub) dropKept() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.waiting > 0 {
		return
	}
	for crowd, keys := range h.kept {
		for _, k := range keys {
			delete(h.recent, k)
		}
		delete(h.kept, crowd)
	}
	clear(h.crowd)
}

// goroutineCache is more than the exited goroutines each processor keeps
// for reuse (the runtime keeps up to 63 per processor, each with its
// stack).
const goroutineCache = 64

// recycleGoroutineStacks makes the goroutine stacks the runtime keeps for
// reuse the size new goroutines start with now. Each processor keeps up
// to 63 exited goroutines with their stacks, and after a crowd those are
// the crowd's handlers' (the runtime starts goroutines at the average
// stack size it last scanned: 8–16 KiB while thousands of watch handlers
// were parked, 2–4 KiB without them), about 2 MiB that no collection
// frees. A collection first recomputes the starting size from the
// goroutines live now. Then the member runs on one processor for a
// moment: the others' caches go to the runtime's shared list, whose
// stacks the next collection frees, and the one left is drained by
// starting more goroutines at once than it holds (a cached goroutine
// whose stack is not the starting size gets a new one, and its old stack
// is freed); they exit at once, leaving stacks of the new size, and a
// collection frees the shared list's stacks before the other processors
// are back. Draining
// each processor's cache from goroutines left to the scheduler reached
// only some of them (TestWatchReleaseResizesKeptStacks).
func recycleGoroutineStacks() {
	runtime.GC()
	procs := runtime.GOMAXPROCS(1)
	release := make(chan struct{})
	var exited sync.WaitGroup
	for range goroutineCache {
		exited.Add(1)
		go func() {
			defer exited.Done()
			<-release
		}()
	}
	close(release)
	exited.Wait()
	runtime.GC() // before the other processors are back and take from the shared list
	restoreProcs(procs)
}

// restoreProcs sets GOMAXPROCS back to procs, keeping the runtime's
// default (which follows the CPU limit of the member's cgroup) when that
// is procs.
func restoreProcs(procs int) {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.SetDefaultGOMAXPROCS()
	}
	if runtime.GOMAXPROCS(0) != procs {
		runtime.GOMAXPROCS(procs)
	}
}

// held is the memory the runtime holds from the system (mapped and not
// returned) and how much of it is goroutine stacks.
type held struct{ total, stacks uint64 }

func readHeld() held {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/stacks:bytes"}}
	metrics.Read(s)
	return held{total: s[0].Value.Uint64() - s[1].Value.Uint64(), stacks: s[2].Value.Uint64()}
}

func newHandBacksCounter() prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{
		Name: "rackfence_watch_memory_handbacks_total",
		Help: "Times the memory of a crowd of watchers that left was handed back to the system (a collection, the goroutine stacks kept for reuse resized, free pages returned).",
	})
}
