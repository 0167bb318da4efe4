package api

import (
	"runtime"
	"runtime/debug"
	"time"
)

// handBack gives the memory a crowd of watchers used back to the system
// once most of them left (watchHub.leave schedules it freeAfter later),
// and once more freeAgain after that, for the connections their clients
// closed late. Each hand-back collects twice before returning free pages:
// the first collection moves what sync.Pools hold (the HTTP/2 server's
// pooled frame and response writers, about 4 KiB each, thousands after
// a crowd) to their victim caches, the second frees it, so the spans they
// kept in use are empty and go back too. The kept rounds of crowds nobody
// watches any more are dropped first.
func (h *watchHub) handBack() {
	h.dropKept()
	runtime.GC()
	debug.FreeOSMemory()
	time.AfterFunc(freeAgain, func() {
		h.dropKept()
		runtime.GC()
		debug.FreeOSMemory()
		h.mu.Lock()
		h.freeing = false
		h.mu.Unlock()
	})
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
