package agent

import (
	"context"

	"github.com/rackfence/rackfence/shared/wire"
)

// writeFault is the faultyCoordinator's fault around the agent's next full
// status write of one host (holdWriteOf): the rack report carrying it is
// held before it reaches the coordinator, and watch answers are held with
// it, so a test can delete the host and create it again under the same
// name while the write is in flight and the agent knows neither.
type writeFault struct {
	host string
	// touch: the fault holds the host's next touch instead of its next
	// full write (holdTouchOf).
	touch bool
	// sent: the write was sent (and is held until release); entered is
	// closed then.
	sent                    bool
	entered, release, watch chan struct{}
	// answer receives the coordinator's answer for the host.
	answer chan wire.RackHostResult
}

// holdWriteOf arms the fault for host's next full write (a rack report
// carrying its status). It returns a channel closed once that report is
// held, the release of the report, the release of watch answers (held
// from the moment the report is), and a channel that receives the
// coordinator's answer for the host once released.
func (f *faultyCoordinator) holdWriteOf(host string) (entered <-chan struct{}, releaseWrite, releaseWatch func(), answer <-chan wire.RackHostResult) {
	wf := &writeFault{host: host, entered: make(chan struct{}), release: make(chan struct{}), watch: make(chan struct{}),
		answer: make(chan wire.RackHostResult, 1)}
	f.mu.Lock()
	f.write = wf
	f.mu.Unlock()
	return wf.entered, closer(wf.release), closer(wf.watch), wf.answer
}

// holdTouchOf is holdWriteOf for host's next touch.
func (f *faultyCoordinator) holdTouchOf(host string) (entered <-chan struct{}, releaseWrite, releaseWatch func()) {
	entered, releaseWrite, releaseWatch, _ = f.holdWriteOf(host)
	f.mu.Lock()
	f.write.touch = true
	f.mu.Unlock()
	return entered, releaseWrite, releaseWatch
}

// writeSent is called with f.mu held for a rack report before it is
// passed on: it returns the channel the report waits on when it carries
// the armed write (nil otherwise).
func (f *faultyCoordinator) writeSent(r wire.RackStatusReport) <-chan struct{} {
	wf := f.write
	if wf == nil || wf.sent {
		return nil
	}
	for _, h := range r.Hosts {
		if h.Name == wf.host && (wf.touch && h.IsTouch() || !wf.touch && h.Status != nil) {
			wf.sent = true
			close(wf.entered)
			return wf.release
		}
	}
	return nil
}

// waitWrite waits, without f.mu, for the release of the held report.
func waitWrite(ctx context.Context, hold <-chan struct{}) error {
	select {
	case <-hold:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// writeAnswered hands the armed write's host its answer.
func (f *faultyCoordinator) writeAnswered(r wire.RackStatusReport, res *wire.RackStatusResult) {
	f.mu.Lock()
	wf := f.write
	f.mu.Unlock()
	for i, h := range r.Hosts {
		if h.Name == wf.host {
			wf.answer <- res.Hosts[i]
			return
		}
	}
}

// writeWatchHeld returns the channel a watch answer waits on while the
// armed write is held (nil: none).
func (f *faultyCoordinator) writeWatchHeld() <-chan struct{} {
	if wf := f.write; wf != nil && wf.sent && !closed(wf.watch) {
		return wf.watch
	}
	return nil
}
