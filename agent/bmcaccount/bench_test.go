package bmcaccount

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
	"github.com/rackfence/rackfence/testkit/coordtest"
)

// BenchmarkTakeoverRotation100: a rack of 100 hosts behind BMCs answering
// in 20 ms, each with the tier's account already made; each iteration is a
// takeover (a new epoch) whose holder settles every host with 32 workers,
// as the agent's first look at each host does. Reports the time until
// every host has its new password (ms/takeover), BMC requests per host,
// coordinator writes per host, and accounts locked out (must be 0).
//
//	go test -run '^$' -bench BenchmarkTakeoverRotation100 -benchtime 3x ./agent/bmcaccount/
func BenchmarkTakeoverRotation100(b *testing.B) {
	const hosts, workers = 100, 32
	c := coordtest.Start(b, coordtest.Options{})
	sim, err := bmcsim.Start(bmcsim.Config{Hosts: hosts, Latency: 20 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	defer sim.Close()
	for i := range hosts {
		c.Apply(&wire.Host{Name: fmt.Sprintf("h%d", i), Rack: "r1", BMC: wire.BMC{Address: sim.Address(i), Credentials: "bmc"}, BootMACAddress: sim.MAC(i)})
	}
	ag := c.AgentClient("r1")
	ctx := b.Context()
	var epoch uint64
	n := 0
	takeover := func() time.Duration {
		if epoch != 0 {
			if err := ag.ReleaseLease(ctx, "r1", wire.LeaseRequest{Holder: fmt.Sprint("h", n), Epoch: epoch}); err != nil {
				b.Fatal(err)
			}
		}
		n++
		l, err := ag.AcquireLease(ctx, "r1", wire.LeaseRequest{Holder: fmt.Sprint("h", n), TTL: wire.Duration(time.Minute)})
		if err != nil {
			b.Fatal(err)
		}
		epoch = l.Epoch
		h := fence.NewHolder(nil)
		h.Set(fence.Lease{Rack: "r1", Holder: fmt.Sprint("h", n), Epoch: epoch, TTL: time.Minute, Deadline: time.Now().Add(time.Minute)})
		m := New(Config{Store: ag, Guard: guard.NewGuard(h, nil)})
		start := time.Now()
		work := make(chan int)
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range work {
					t := Target{Host: fmt.Sprintf("h%d", i), Address: sim.Address(i), Username: "admin", Password: "password"}
					if _, _, off, err := m.Credentials(ctx, t, epoch); err != nil || off != "" {
						b.Errorf("host %d: off %q err %v", i, off, err)
					}
				}
			}()
		}
		for i := range hosts {
			work <- i
		}
		close(work)
		wg.Wait()
		return time.Since(start)
	}
	takeover() // the accounts are made
	requests := func() int {
		s := 0
		for i := range hosts {
			s += sim.State(i).Requests
		}
		return s
	}
	b.ResetTimer()
	var total time.Duration
	reqs, idx := 0, c.Store.FSM().AppliedIndex()
	for range b.N {
		before := requests()
		total += takeover()
		reqs += requests() - before
	}
	b.StopTimer()
	locked := 0
	for i := range hosts {
		accts, _ := sim.Accounts(i)
		for _, a := range accts {
			if a.Locked {
				locked++
			}
		}
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/takeover")
	b.ReportMetric(float64(reqs)/float64(b.N*hosts), "bmc-requests/host")
	b.ReportMetric(float64(c.Store.FSM().AppliedIndex()-idx)/float64(b.N*hosts), "raft-entries/host")
	b.ReportMetric(float64(locked), "lockouts")
}
