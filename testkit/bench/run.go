package bench

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// Result is one load run.
type Result struct {
	Target   string
	Clients  int
	Writes   int
	Errors   int
	FirstErr error
	Elapsed  time.Duration
	P50, P99 time.Duration
}

// Rate is acknowledged writes per second.
func (r Result) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Writes) / r.Elapsed.Seconds()
}

// Run drives t with clients concurrent writers for d, each writing a random
// key among keys, one request at a time (closed loop), after a warm-up.
func Run(ctx context.Context, t Target, clients int, d, warmup time.Duration, keys int) Result {
	s, lats := measure(ctx, t, clients, d, warmup, keys)
	res := Result{Target: s.Target, Clients: clients}
	res.add(s)
	res.setPercentiles(lats)
	return res
}

// measure runs one warm-up (unmeasured) and one measured closed-loop
// interval of d against t, returning the interval and its latencies.
func measure(ctx context.Context, t Target, clients int, d, warmup time.Duration, keys int) (Slice, []time.Duration) {
	if warmup > 0 {
		wctx, cancel := context.WithTimeout(ctx, warmup)
		runLoop(wctx, t, clients, keys)
		cancel()
	}
	st0 := readSteal()
	rctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	start := time.Now()
	lats, errs, first := runLoop(rctx, t, clients, keys)
	el := time.Since(start)
	return Slice{Target: t.Name(), Writes: len(lats), Errors: errs, FirstErr: first, Elapsed: el, Steal: stealSince(st0)}, lats
}

func runLoop(ctx context.Context, t Target, clients, keys int) ([]time.Duration, int, error) {
	var (
		mu    sync.Mutex
		lats  []time.Duration
		errs  int
		first error
		wg    sync.WaitGroup
	)
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 7))
			var mine []time.Duration
			for ctx.Err() == nil {
				s := time.Now()
				err := t.Put(ctx, rng.IntN(keys))
				if ctx.Err() != nil {
					break
				}
				if err != nil {
					mu.Lock()
					errs++
					if first == nil {
						first = err
					}
					mu.Unlock()
					continue
				}
				mine = append(mine, time.Since(s))
			}
			mu.Lock()
			lats = append(lats, mine...)
			mu.Unlock()
		}(uint64(c) + 1)
	}
	wg.Wait()
	return lats, errs, first
}
