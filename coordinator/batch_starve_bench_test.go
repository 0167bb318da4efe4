package coordinator

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rackfence/rackfence/coordinator/fsm"
)

type simFuture struct {
	until time.Time
	resp  any
}

func (f simFuture) Error() error  { time.Sleep(time.Until(f.until)); return nil }
func (f simFuture) Index() uint64 { return 1 }
func (f simFuture) Response() any { return f.resp }

// BenchmarkStarvedBatcher replays a leader starved of CPU, scaled down:
// 45 writers (each waits 100 ms after a result, gives up after the apply
// timeout of 200 ms and repeats at once) against a Raft that commits a
// command in 2 ms (capacity 500/s, load about 430/s) and stalls for the
// first 3 s. It reports, over the 5 s after the stall, the writes that
// got a result, the attempts that timed out, the commands handed to Raft
// and how long after the stall the first write got its result. A writer
// refused because the queue is overdue (Store.Apply's ErrBusy) waits
// 100 ms, as Retry-After asks. One run takes 8 s: -benchtime=1x.
func BenchmarkStarvedBatcher(bb *testing.B) {
	for range bb.N {
		ok, timedOut, cmds, first := starvedBatcher()
		bb.ReportMetric(float64(ok), "ok")
		bb.ReportMetric(float64(timedOut), "timeouts")
		bb.ReportMetric(float64(cmds), "applied")
		bb.ReportMetric(first.Seconds()*1000, "first-ok-ms")
	}
}

func starvedBatcher() (ok, timedOut, cmds int64, first time.Duration) {
	const timeout = 200 * time.Millisecond
	b := newBatcher(nil, 1024, timeout, NewMetrics(), nil)
	defer close(b.stop)
	var mu sync.Mutex
	stallEnd := time.Now().Add(3 * time.Second)
	var next time.Time
	var applied atomic.Int64
	b.apply = func(cmd []byte, _ time.Duration) raft.ApplyFuture {
		n := len(cmd) / 100 // each write is 100 bytes
		if n == 0 {
			n = 1
		}
		applied.Add(int64(n))
		mu.Lock()
		start := time.Now()
		if next.After(start) {
			start = next
		}
		if stallEnd.After(start) {
			start = stallEnd
		}
		next = start.Add(time.Duration(n) * 2 * time.Millisecond)
		u := next
		mu.Unlock()
		res := make([]fsm.Result, n)
		return simFuture{until: u, resp: res}
	}
	var okN, timedOutN atomic.Int64
	var firstOK atomic.Int64
	end := stallEnd.Add(5 * time.Second)
	var wg sync.WaitGroup
	for c := 0; c < 45; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				if b.overdue() {
					time.Sleep(100 * time.Millisecond)
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				p := &pending{key: fmt.Sprint(c), data: make([]byte, 100), done: make(chan fsm.Result, 1), ctx: ctx, queued: time.Now()}
				b.active.Add(1)
				b.in <- p
				select {
				case <-p.done:
					okN.Add(1)
					if time.Now().After(stallEnd) {
						firstOK.CompareAndSwap(0, int64(time.Since(stallEnd)))
					}
					cancel()
					time.Sleep(100 * time.Millisecond)
				case <-ctx.Done():
					cancel()
					timedOutN.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return okN.Load(), timedOutN.Load(), applied.Load(), time.Duration(firstOK.Load())
}
