package fsm

import (
	"fmt"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// EndRestored ends, in the lease history, every lease a backup held:
// a restored cluster grants every rack anew under its new generation.
const EndRestored = "restored"

// Restored makes the state read from a backup the first state of a new
// cluster (rackfence-coordinator restore, coordinator/restore.go): the
// restore generation goes one up, the old members are forgotten, every
// lease held is ended ("restored", at), and the FSM counts entry index
// as applied. It answers how many leases it ended. at comes from the
// caller: the FSM reads no clock.
func (f *FSM) Restored(index uint64, at time.Time) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.s
	if s.Generation >= MaxGeneration {
		return 0, fmt.Errorf("the backup's restore generation is %d, the most there can be (epoch.go): it cannot be restored again", s.Generation)
	}
	s.Generation++
	s.Members = map[string]string{}
	ended := 0
	for name, r := range s.Racks {
		if r.Lease == nil {
			continue
		}
		ep := r.Lease.Epoch
		hist := append([]wire.LeaseRecord(nil), r.History...)
		for i := len(hist) - 1; i >= 0; i-- {
			if hist[i].Epoch == ep {
				at := at
				hist[i].EndedAt, hist[i].End = &at, EndRestored
				break
			}
		}
		r.History, r.Lease = hist, nil
		s.Racks[name] = r
		ended++
	}
	f.applied.Store(index)
	return ended, nil
}
