package pivot_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
)

// BenchmarkPivotRack measures a rack pivot from the command to every host
// under management in the destination (rackfencectl pivot --rack --wait
// returns once each host is adopted there), against bmcsim with no added
// latency, for 1 and 50 hosts. Run:
//
//	go test -run '^$' -bench PivotRack -benchtime 1x ./coordinator/pivot/
func BenchmarkPivotRack(b *testing.B) {
	for _, n := range []int{1, 50} {
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			x := startTiers(b, n)
			for i := 0; i < n; i++ {
				x.a.Apply(x.sim.Host(fmt.Sprintf("h%02d", i), "r1", i))
			}
			for i := 0; i < n; i++ {
				x.a.WaitHost(fmt.Sprintf("h%02d", i), 5*time.Minute, "available in site-a", rig.StateIs(wire.StateAvailable, wire.OpOK))
			}
			var total time.Duration
			for it := 0; it < b.N; it++ {
				from, to, tok := x.a, "site-b", x.adminTokA
				if it%2 == 1 {
					from, to, tok = x.b, "site-a", x.adminTokB
				}
				start := time.Now()
				out, code := x.ctl(from, tok, "pivot", "--rack", "r1", "--to", to, "--wait")
				el := time.Since(start)
				if code != 0 {
					b.Fatalf("pivot exited %d:\n%s", code, out)
				}
				total += el
			}
			b.ReportMetric(total.Seconds()/float64(b.N), "s/pivot")
			fmt.Printf("pivot of a rack of %d hosts: %.2f s from the command to all %d under management in the destination\n",
				n, total.Seconds()/float64(b.N), n)
		})
	}
}
