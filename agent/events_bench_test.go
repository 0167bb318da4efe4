package agent_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// BenchmarkBMCEvents prints, per mode, the time from a power change at
// the BMC (POST /sim/power, the button at the machine) to the agent acting
// on it (its power-on reset reaching the BMC: the status write that
// carries the change goes out before that reset, so this bounds the time
// to the host's status) as p50/p99, and the Redfish requests per host per
// hour in steady state. Modes: "events" (--events-addr), "polling" (power
// poll only), "off" (neither: today's default without --events-addr; no
// change is ever noticed). Every periodic pace runs 25x faster than its
// default (--status-refresh, --health-interval and --power-poll 12 s
// instead of 5 min, --events-silence 24 s instead of 10 min) so a
// one-minute window holds
// several periods; the per-hour figures are divided by 25 back to the
// defaults, and the polling latency scales with the poll (x25).
//
//	make build && RACKFENCE_BIN=$PWD/bin go test -run '^$' -bench BenchmarkBMCEvents -benchtime 1x ./agent/
func BenchmarkBMCEvents(b *testing.B) {
	testenv.SkipShort(b)
	const (
		hosts  = 8
		trials = 16
		scale  = 25
		window = time.Minute
	)
	for _, mode := range []string{"events", "polling", "off"} {
		b.Run(mode, func(b *testing.B) {
			for range b.N {
				e := newEnv(b, envOpts{bmcs: hosts})
				for i := range hosts {
					e.apply(e.hostSpec(fmt.Sprintf("b%d", i), "r1", i))
				}
				args := []string{"--status-refresh", "12s", "--health-interval", "12s"}
				switch mode {
				case "events":
					args = append(args, "--events-addr", fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(b, "127.0.0.1")),
						"--power-poll", "12s", "--events-silence", "24s")
				case "polling":
					args = append(args, "--power-poll", "12s")
				}
				e.startAgent("r1", "a1", args...)
				for i := range hosts {
					e.waitHost(fmt.Sprintf("b%d", i), 120*time.Second, "available", func(h *wire.Host) error {
						if err := stateIs(wire.StateAvailable, wire.OpOK)(h); err != nil {
							return err
						}
						if mode == "events" {
							return eventsIs("live")(h)
						}
						return nil
					})
				}
				// Steady state: requests over the window.
				reqs := func() int {
					n := 0
					for i := range hosts {
						st, err := e.simState(i)
						if err != nil {
							b.Fatal(err)
						}
						n += st.Requests
					}
					return n
				}
				time.Sleep(15 * time.Second) // past the first periods after start-up
				r0 := reqs()
				time.Sleep(window)
				perHour := float64(reqs()-r0) / hosts / window.Hours() / scale
				b.ReportMetric(perHour, "req/host/h")
				if mode == "off" {
					b.Logf("%s: %.0f Redfish requests per host per hour at the default paces; a power change at the machine is never noticed", mode, perHour)
					continue
				}
				// Latency: press Off at the machine; the agent powers it on.
				var lat []time.Duration
				for k := range trials {
					i := k % hosts
					before := len(resetsOn(e, i))
					t0 := time.Now()
					simPost(b, e.s, i, "/sim/power", `{"power": "Off"}`)
					var at time.Time
					testenv.Eventually(b, 120*time.Second, "the agent powers the host on again", func() error {
						on := resetsOn(e, i)
						if len(on) <= before {
							return fmt.Errorf("no new power-on")
						}
						at = on[len(on)-1]
						return nil
					})
					lat = append(lat, at.Sub(t0))
					testenv.Eventually(b, 60*time.Second, "on at the BMC", func() error {
						if st, _ := e.simState(i); st.Power != "On" {
							return fmt.Errorf("power %s", st.Power)
						}
						return nil
					})
				}
				slices.Sort(lat)
				p50, p99 := lat[len(lat)/2], lat[len(lat)-1]
				if len(lat) >= 100 {
					p99 = lat[len(lat)*99/100]
				}
				b.ReportMetric(p50.Seconds(), "p50-s")
				b.ReportMetric(p99.Seconds(), "p99-s")
				note := ""
				if mode == "polling" {
					note = fmt.Sprintf(" (at the default 5 min poll: about p50 %s, p99 %s)", (p50 * scale).Round(time.Second), (p99 * scale).Round(time.Second))
				}
				b.Logf("%s: power change at the BMC to the agent acting on it over %d changes: p50 %s p99 %s%s; %.0f Redfish requests per host per hour at the default paces",
					mode, len(lat), p50.Round(time.Millisecond), p99.Round(time.Millisecond), note, perHour)
			}
		})
	}
}

// resetsOn lists when the agent's power-on resets reached BMC i.
func resetsOn(e *env, i int) []time.Time {
	var out []time.Time
	for _, l := range e.auditLines(i) {
		if strings.HasSuffix(l.Path, "/Actions/ComputerSystem.Reset") && strings.Contains(l.Body, `"On"`) && l.Status/100 == 2 {
			if t, err := time.Parse(time.RFC3339Nano, l.Time); err == nil {
				out = append(out, t)
			}
		}
	}
	return out
}
