package agent

import (
	"context"
	"sync"

	"github.com/rackfence/rackfence/shared/wire"
)

// removeFault is the faultyCoordinator's fault around the agent's removal
// of one host (holdRemoveOf): the coordinator applies the removal, and the
// agent learns of it late, so a test can create the host again before the
// agent's next watch answer and before its removal write returns.
type removeFault struct {
	host string
	// lose: the removal's answer is errUnreachable (lost on the way back)
	// and the host's later reports fail, unsent, until releaseWrites;
	// otherwise the answer itself waits for releaseWrites.
	lose bool
	// sent: the removal was sent; from then on watch answers wait for
	// watch to close.
	sent          bool
	watch, writes chan struct{}
}

// holdRemoveOf arms the fault for host's next removal (a rack report
// carrying Remove). From the moment that report is sent every watch answer
// is held until releaseWatch; the report's answer is held until
// releaseWrites, or with lose answered errUnreachable at once, and every
// later report of host fails unsent until releaseWrites.
func (f *faultyCoordinator) holdRemoveOf(host string, lose bool) (releaseWatch, releaseWrites func()) {
	rf := &removeFault{host: host, lose: lose, watch: make(chan struct{}), writes: make(chan struct{})}
	f.mu.Lock()
	f.remove = rf
	f.mu.Unlock()
	return closer(rf.watch), closer(rf.writes)
}

// closer returns a function closing ch (once).
func closer(ch chan struct{}) func() {
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// removeSent is called with f.mu held for each host of a rack report
// before it is passed on: mine is true for the armed removal (now sent),
// err refuses a later report of a host whose removal's answer was lost.
func (f *faultyCoordinator) removeSent(h wire.RackHostReport) (mine bool, err error) {
	rf := f.remove
	if rf == nil || rf.host != h.Name {
		return false, nil
	}
	if rf.sent {
		if rf.lose && !closed(rf.writes) {
			return false, errUnreachable
		}
		return false, nil
	}
	if !h.Remove {
		return false, nil
	}
	rf.sent = true
	return true, nil
}

// removeAnswered is called once the coordinator applied the armed removal:
// the answer is lost, or waits for releaseWrites.
func (f *faultyCoordinator) removeAnswered(ctx context.Context) error {
	f.mu.Lock()
	rf := f.remove
	f.mu.Unlock()
	if rf.lose {
		return errUnreachable
	}
	select {
	case <-rf.writes:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// watchHeld returns the channel a watch answer waits on (nil: none).
func (f *faultyCoordinator) watchHeld() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if rf := f.remove; rf != nil && rf.sent && !closed(rf.watch) {
		return rf.watch
	}
	return f.writeWatchHeld()
}

func closed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
