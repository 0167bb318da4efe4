package fsm

import (
	"fmt"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

const benchRacks, benchHostsPerRack = 500, 4

// benchFleet is an FSM of benchRacks racks of benchHostsPerRack hosts,
// each rack leased and each host with a status; it returns the FSM, the
// next free log index and the racks' lease epochs. It never hashes its
// state (a hash every DefaultHashEvery entries would be most of the cost,
// and noise, at these entries' sizes).
func benchFleet(b *testing.B) (*FSM, uint64, []uint64) {
	f := New(Options{HashEvery: 1 << 62})
	apply := applier(b, f)
	eps := make([]uint64, benchRacks)
	for r := 0; r < benchRacks; r++ {
		rack := fmt.Sprintf("r%03d", r)
		for i := 0; i < benchHostsPerRack; i++ {
			apply(PutHostCmd{Host: host(fmt.Sprintf("%s-h%d", rack, i), rack)})
		}
		eps[r] = apply(LeaseAcquireCmd{Rack: rack, Holder: "a", TTL: 10 * time.Second, Time: t0}).(wire.Lease).Epoch
		rep := RackStatusCmd{Rack: rack, Epoch: eps[r], Time: t0}
		for i := 0; i < benchHostsPerRack; i++ {
			rep.Hosts = append(rep.Hosts, wire.RackHostReport{Name: fmt.Sprintf("%s-h%d", rack, i), Status: okStatus()})
		}
		apply(rep)
	}
	return f, f.AppliedIndex() + 1, eps
}

// benchEntry encodes a steady fleet's commonest commands in rack r: kind
// 0 a quiet renewal, kind 1 a status write of one host (powered on when
// on, so two in turn are both changes).
func benchEntry(b *testing.B, r int, ep uint64, kind int, on bool) []byte {
	rack := fmt.Sprintf("r%03d", r)
	var c Command = LeaseRenewCmd{Rack: rack, Holder: "a", Epoch: ep, TTL: 10 * time.Second}
	if kind == 1 {
		st := okStatus()
		st.PoweredOn = on
		c = RackStatusCmd{Rack: rack, Epoch: ep, Time: t0, Hosts: []wire.RackHostReport{{Name: rack + "-h0", Status: st}}}
	}
	d, err := Encode(c)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// BenchmarkApplyWatched is Apply's cost per entry (decode, apply, settle
// what watchers see, wake) of a steady fleet's commonest entries, in turn
// over 500 racks: a quiet lease renewal, a status write of one host, and a
// leader batch of 64 (renewals and status writes, half each).
//
//	go test -run '^$' -bench 'ApplyWatched|WatchUnchanged' -benchmem ./coordinator/fsm/
func BenchmarkApplyWatched(b *testing.B) {
	run := func(b *testing.B, entries func(eps []uint64) [][]byte) {
		f, idx, eps := benchFleet(b)
		es := entries(eps)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			f.Apply(idx, es[i%len(es)])
			idx++
		}
	}
	for kind, name := range []string{"renewal", "status"} {
		b.Run(name, func(b *testing.B) {
			run(b, func(eps []uint64) [][]byte {
				var es [][]byte
				for _, on := range []bool{false, true} {
					for r := range eps {
						es = append(es, benchEntry(b, r, eps[r], kind, on))
					}
				}
				return es
			})
		})
	}
	b.Run("batch-64", func(b *testing.B) {
		run(b, func(eps []uint64) [][]byte {
			var es [][]byte
			for _, on := range []bool{false, true} {
				for r := 0; r < len(eps); r += 32 {
					var parts [][]byte
					for k := r; k < min(r+32, len(eps)); k++ {
						parts = append(parts, benchEntry(b, k, eps[k], 0, on), benchEntry(b, k, eps[k], 1, on))
					}
					es = append(es, EncodeBatch(parts))
				}
			}
			return es
		})
	})
}

// BenchmarkWatchUnchanged is the cost of a watch's check that finds
// nothing new (the long poll's path before it sleeps, and each wake-up):
// a rack watch with statuses, a status-less one after status writes, and
// the fleet watch over 500 racks.
func BenchmarkWatchUnchanged(b *testing.B) {
	f, idx, eps := benchFleet(b)
	before := idx - 1
	for r := range eps {
		f.Apply(idx, benchEntry(b, r, eps[r], 1, false))
		idx++
	}
	now := idx - 1
	names := make([]string, benchRacks)
	for r := range names {
		names[r] = fmt.Sprintf("r%03d", r)
	}
	b.Run("rack", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, ok := f.changesOf(names[i%benchRacks], now, true); ok {
				b.Fatal("changed")
			}
		}
	})
	b.Run("rack-statusless", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, ok := f.changesOf(names[i%benchRacks], before, false); ok {
				b.Fatal("changed")
			}
		}
	})
	b.Run("fleet", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, ok := f.fleetChanges(now); ok {
				b.Fatal("changed")
			}
		}
	})
}
