package api

import "time"

// A crowd's next answer waits until its last one is written (a sweep):
// with thousands of streamed watchers, writing one answer to all of them
// takes the member tens of milliseconds or more, and a round answered
// while the last was still being written made the crowd's early writers
// take one more line each for the same few changes. Waiting for the
// writers makes each watcher take one line per sweep, with every change
// since the last: the lines, and the member's time spent writing them,
// fall as the writes come faster, and the member never writes two
// answers of one crowd at once, leaving the rest of its time to the
// writes themselves. The wait is bounded by sweepWait: a watcher that
// reads slowly delays its crowd no longer than that.

// sweepWait bounds how long a woken round of a crowd that lingers waits
// for the crowd's writers of its last answer.
const sweepWait = 250 * time.Millisecond

// crowdWriters counts a crowd's watchers writing an answer.
type crowdWriters struct {
	n    int
	idle chan struct{} // closed when n falls to 0
}

// writing counts a watcher of key's crowd starting (d = 1) or ending
// (d = -1) writing an answer.
func (h *watchHub) writing(key watchKey, d int) {
	key.after = 0
	h.mu.Lock()
	defer h.mu.Unlock()
	w := h.writers[key]
	if w == nil {
		if d < 0 {
			return
		}
		w = &crowdWriters{idle: make(chan struct{})}
		h.writers[key] = w
	}
	if w.n += d; w.n <= 0 {
		close(w.idle)
		delete(h.writers, key)
	}
}

// awaitSweep waits until no watcher of crowd writes an answer, at most
// sweepWait, or until done is closed.
func (h *watchHub) awaitSweep(crowd watchKey, done <-chan struct{}) {
	h.mu.Lock()
	w := h.writers[crowd]
	h.mu.Unlock()
	if w == nil {
		return
	}
	t := time.NewTimer(sweepWait)
	defer t.Stop()
	select {
	case <-w.idle:
	case <-t.C:
	case <-done:
	}
}
