package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// detaches detaches hosts spread over ten racks one at a time and measures
// the API answer → the agent's ack visible in a watch of the rack.
func (f *fleet) detaches(ctx context.Context) ([]time.Duration, error) {
	racks := min(10, f.cfg.Racks)
	acked := make(chan string, 64)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var ready sync.WaitGroup
	for r := 0; r < racks; r++ {
		ready.Add(1)
		go f.followAcks(wctx, f.rack(r), acked, &ready)
	}
	ready.Wait()
	var lat []time.Duration
	perRack := f.cfg.Hosts / f.cfg.Racks
	for j := 0; j < f.cfg.Detaches; j++ {
		// host j-th of rack j%racks: i ≡ rack (mod Racks)
		i := (j%racks + (j/racks)%perRack*f.cfg.Racks) % f.cfg.Hosts
		name := fmt.Sprintf("h%06d", i)
		if _, err := f.admin.Detach(ctx, name, wire.IntentRequest{Reason: "fleet bench"}); err != nil {
			return nil, fmt.Errorf("detach %s: %w", name, err)
		}
		answered := time.Now()
	wait:
		for {
			select {
			case n := <-acked:
				if n == name {
					break wait
				}
			case <-time.After(60 * time.Second):
				return nil, fmt.Errorf("no ack for the detach of %s within 60 s", name)
			}
		}
		lat = append(lat, time.Since(answered))
	}
	return lat, nil
}

func (f *fleet) followAcks(ctx context.Context, rack string, out chan<- string, ready *sync.WaitGroup) {
	seen := map[string]uint64{}
	var index uint64
	first := true
	for ctx.Err() == nil {
		r, err := f.admin.Watch(ctx, rack, index, 30*time.Second)
		if err != nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		for _, h := range r.Hosts {
			if d := h.Intents; d != nil && d.Detach != nil && d.Detach.Acknowledged && seen[h.Name] != d.Detach.CreatedIndex {
				seen[h.Name] = d.Detach.CreatedIndex
				if !first {
					select {
					case out <- h.Name:
					case <-ctx.Done():
						return
					}
				}
			}
		}
		if first {
			first = false
			ready.Done()
		}
		index = r.Index
	}
}
