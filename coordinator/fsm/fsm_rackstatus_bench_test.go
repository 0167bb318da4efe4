package fsm

import (
	"fmt"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// BenchmarkRackRefresh is the coordinator's cost of refreshing the
// unchanged statuses of one rack of 1,000 hosts (decode and apply; ns/host
// is per host): per host (a StatusCmd with hardware details each, as agents
// wrote before per-rack reports, batched as the leader batches them), a
// rack report of full statuses, and a rack report of touches.
//
//	go test -run '^$' -bench RackRefresh -benchmem ./coordinator/fsm/
func BenchmarkRackRefresh(b *testing.B) {
	const hosts = 1000
	st := compatCommands()[11].(StatusCmd).Report.Status
	setup := func(b *testing.B) (*FSM, uint64, uint64) {
		f := NewFSM()
		apply := applier(b, f)
		for i := 0; i < hosts; i++ {
			apply(PutHostCmd{Host: host(fmt.Sprintf("h%04d", i), "r1")})
		}
		ep := apply(LeaseAcquireCmd{Rack: "r1", Holder: "a", TTL: time.Minute, Time: t0}).(wire.Lease).Epoch
		rep := RackStatusCmd{Rack: "r1", Epoch: ep, Time: t0}
		for i := 0; i < hosts; i++ {
			s := st
			rep.Hosts = append(rep.Hosts, wire.RackHostReport{Name: fmt.Sprintf("h%04d", i), Status: &s})
		}
		res := apply(rep).(wire.RackStatusResult)
		return f, ep, res.Hosts[0].ModifiedIndex
	}
	run := func(b *testing.B, entries func(ep, base uint64) [][]byte) {
		f, ep, base := setup(b)
		es := entries(ep, base)
		idx := uint64(1 << 20)
		size := 0
		for _, e := range es {
			size += len(e)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for _, e := range es {
				idx++
				if r, ok := f.Apply(idx, e).(Result); ok && r.Err != nil {
					b.Fatal(r.Err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/hosts, "ns/host")
		b.ReportMetric(float64(size)/hosts, "bytes/host")
	}
	b.Run("per-host-status", func(b *testing.B) {
		run(b, func(ep, _ uint64) [][]byte {
			var parts [][]byte
			for i := 0; i < hosts; i++ {
				d, _ := Encode(StatusCmd{Rack: "r1", Name: fmt.Sprintf("h%04d", i), Time: t0, Report: wire.StatusReport{Epoch: ep, Status: st}})
				parts = append(parts, d)
			}
			var out [][]byte
			for i := 0; i < hosts; i += 64 { // leader batches of 64
				out = append(out, EncodeBatch(parts[i:min(i+64, hosts)]))
			}
			return out
		})
	})
	b.Run("rack-full", func(b *testing.B) {
		run(b, func(ep, _ uint64) [][]byte {
			rep := RackStatusCmd{Rack: "r1", Epoch: ep, Time: t0}
			for i := 0; i < hosts; i++ {
				s := st
				rep.Hosts = append(rep.Hosts, wire.RackHostReport{Name: fmt.Sprintf("h%04d", i), Status: &s})
			}
			d, _ := Encode(rep)
			return [][]byte{d}
		})
	})
	b.Run("rack-touch", func(b *testing.B) {
		run(b, func(ep, base uint64) [][]byte {
			rep := RackStatusCmd{Rack: "r1", Epoch: ep, Time: t0}
			for i := 0; i < hosts; i++ {
				rep.Hosts = append(rep.Hosts, wire.RackHostReport{Name: fmt.Sprintf("h%04d", i), Touch: base})
			}
			d, _ := Encode(rep)
			return [][]byte{d}
		})
	})
}
