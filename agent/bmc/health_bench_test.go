package bmc

import (
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// BenchmarkHealthRead: one health read on a kept session against the
// in-process simulator (default profile, both sides in this process):
// the chassis expanded 3 levels every time (what a chassis with
// subsystems needs) and as learnt (one level for the legacy Thermal and
// Power).
//
//	go test -run '^$' -bench HealthRead -benchmem ./agent/bmc/
func BenchmarkHealthRead(b *testing.B) {
	ctx := testCtx(b)
	for _, depth := range []int32{chassisLevels, 0} {
		name := "chassis=3-levels"
		if depth == 0 {
			name = "chassis=learnt"
		}
		b.Run(name, func(b *testing.B) {
			sim := startSim(b, bmcsim.Config{Hosts: 1})
			c, err := Dial(ctx, Target{Address: sim.SystemAddresses(0)[0], Username: "admin", Password: "password"}, Options{Timeout: 20 * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = c.Close(ctx) })
			if _, err := c.Health(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if depth != 0 {
					c.disc.chassisDepth.Store(depth)
				}
				if _, err := c.Health(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
