package fsm

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestAppendEventsKeepsNewest: appendEvents equals "old then add, stamped,
// the newest MaxEvents" for every split of sizes around the bound, and
// shares no array with old.
func TestAppendEventsKeepsNewest(t *testing.T) {
	evs := func(prefix string, n int) []wire.Event {
		out := make([]wire.Event, n)
		for i := range out {
			out[i] = wire.Event{Index: 1, Time: t0, Type: wire.EventWarning, Reason: "R", Message: prefix + strconv.Itoa(i)}
		}
		return out
	}
	c := StatusCmd{Time: t0.Add(1)}
	for _, nOld := range []int{0, 1, 50, 99, 100} {
		for _, nAdd := range []int{1, 2, 50, 100, 101, 150} {
			old, add := append(make([]wire.Event, 0, nOld+200), evs("old", nOld)...), evs("add", nAdd)
			add[0].Time, add[0].Type = wire.Event{}.Time, ""
			var want []wire.Event
			want = append(want, old...)
			for i, e := range add {
				e.Index = 7
				if i == 0 {
					e.Time, e.Type = c.Time, wire.EventNormal
				}
				want = append(want, e)
			}
			if len(want) > MaxEvents {
				want = want[len(want)-MaxEvents:]
			}
			packed := append(make([]eventRec, 0, nOld+200), packEvents(old)...)
			res := appendEvents(packed, add, 7, c.Time)
			if got := eventsOf(res); !reflect.DeepEqual(got, want) {
				t.Fatalf("old %d, add %d: got %d events, first %+v; want %d, first %+v", nOld, nAdd, len(got), got[0], len(want), want[0])
			}
			for i := range res {
				res[i].index = 999
			}
			for _, e := range packed {
				if e.index == 999 {
					t.Fatalf("old %d, add %d: the result shares old's array", nOld, nAdd)
				}
			}
		}
	}
}
