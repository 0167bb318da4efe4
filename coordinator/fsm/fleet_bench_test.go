package fsm

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// fleetOf returns an FSM holding hosts hosts in 100 racks, each rack
// leased and every host reported (available, one in 50 in error, one in
// 100 with a pending detach), and the epochs of the racks' leases.
func fleetOf(tb testing.TB, hosts int) (*FSM, map[string]uint64) {
	f := NewFSM()
	apply := applier(tb, f)
	const racks = 100
	epochs := map[string]uint64{}
	for r := 0; r < racks; r++ {
		rack := fmt.Sprintf("r%03d", r)
		epochs[rack] = apply(LeaseAcquireCmd{Rack: rack, Holder: "a-" + rack, TTL: time.Minute, Time: t0}).(wire.Lease).Epoch
	}
	for r := 0; r < racks; r++ {
		rack := fmt.Sprintf("r%03d", r)
		rep := RackStatusCmd{Rack: rack, Epoch: epochs[rack], Time: t0}
		for i := r; i < hosts; i += racks {
			name := fmt.Sprintf("h%06d", i)
			apply(PutHostCmd{Host: host(name, rack), Time: t0})
			st := wire.HostStatus{ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpOK}
			if i%50 == 0 {
				st.OperationalStatus, st.ErrorType = wire.OpError, "inspection"
			}
			rep.Hosts = append(rep.Hosts, wire.RackHostReport{Name: name, Status: &st})
			if i%100 == 1 {
				apply(PutIntentCmd{Name: name, Kind: wire.IntentDetach, Intent: wire.Intent{Reason: "bench"}, Time: t0})
			}
		}
		apply(rep)
	}
	return f, epochs
}

// BenchmarkFleet is what one /metrics scrape costs the FSM: Fleet() takes
// the read lock for all of its time, so ns/op is also how long every
// Apply waits behind a scrape that began just before it.
//
//	go test -run '^$' -bench 'Fleet$' -benchmem ./coordinator/fsm/
func BenchmarkFleet(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			f, _ := fleetOf(b, n)
			if fl := f.Fleet(); fl.ByStatus[wire.OpOK]+fl.ByStatus[wire.OpError] != n {
				b.Fatalf("fleet counts %v, want %d hosts", fl.ByStatus, n)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f.Fleet()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs-locked/op")
		})
	}
}

// BenchmarkApplyWhileScraped is the latency of one host's status write
// (the Apply of a one-host rack report, lock wait included) at 100,000
// hosts, alone and while another goroutine scrapes Fleet() back to back
// (a scraper whose walk outlasts its interval, or several scrapers: the
// worst a 1 s scrape does to the writes that meet it). It prints p50, p99
// and max per variant.
//
//	go test -run '^$' -bench ApplyWhileScraped -benchtime 2000x ./coordinator/fsm/
func BenchmarkApplyWhileScraped(b *testing.B) {
	f, epochs := fleetOf(b, 100_000)
	idx := uint64(1 << 30)
	for _, scraped := range []bool{false, true} {
		b.Run(fmt.Sprintf("scraper=%v", scraped), func(b *testing.B) {
			var stop atomic.Bool
			var wg sync.WaitGroup
			scrapes := 0
			if scraped {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for !stop.Load() {
						f.Fleet()
						scrapes++
					}
				}()
			}
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				n := i % 100_000
				rack := fmt.Sprintf("r%03d", n%100)
				st := wire.HostStatus{ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpOK}
				if i%2 == 0 {
					st.ProvisioningState = wire.StateProvisioned
				}
				d, err := Encode(RackStatusCmd{Rack: rack, Epoch: epochs[rack], Time: t0,
					Hosts: []wire.RackHostReport{{Name: fmt.Sprintf("h%06d", n), Status: &st}}})
				if err != nil {
					b.Fatal(err)
				}
				idx++
				start := time.Now()
				f.Apply(idx, d)
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			stop.Store(true)
			wg.Wait()
			slices.Sort(lat)
			q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
			b.ReportMetric(q(0.5), "p50-µs")
			b.ReportMetric(q(0.99), "p99-µs")
			b.ReportMetric(q(1), "max-µs")
			b.ReportMetric(float64(scrapes), "scrapes")
		})
	}
}
