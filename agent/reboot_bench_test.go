package agent_test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// BenchmarkRebootLatency measures, against rackfence-bmcsim, the time from
// the API's answer to a reboot (hard; soft with a 300 ms OS shutdown; soft
// with an OS that ignores it, hard after --soft-power-off-timeout 1s) or
// an inspect until the agent dropped the intent (the host is on again /
// inspected), with no BMC latency and with 200 ms per Redfish request:
//
//	make build && RACKFENCE_BIN=$PWD/bin go test -run '^$' -bench BenchmarkRebootLatency -benchtime 10x ./agent/
func BenchmarkRebootLatency(b *testing.B) {
	type op struct {
		name    string
		simArgs []string
		agent   []string
		send    func(e *env) error
		done    func(h *wire.Host) bool
	}
	reboot := func(mode string) func(e *env) error {
		return func(e *env) error {
			_, err := e.admin.Reboot(ctx(b), "h", wire.RebootRequest{Mode: mode})
			return err
		}
	}
	rebooted := func(h *wire.Host) bool { return (h.Intents == nil || h.Intents.Reboot == nil) && h.Status.PoweredOn }
	ops := []op{
		{"hard", nil, nil, reboot(wire.RebootHard), rebooted},
		{"soft", []string{"--graceful-shutdown-delay", "300ms"}, nil, reboot(wire.RebootSoft), rebooted},
		{"soft-fallback-1s", []string{"--ignore-graceful-shutdown"}, []string{"--soft-power-off-timeout", "1s"}, reboot(wire.RebootSoft), rebooted},
		{"inspect", nil, nil, func(e *env) error {
			_, err := e.admin.Inspect(ctx(b), "h", wire.IntentRequest{})
			return err
		}, func(h *wire.Host) bool {
			return (h.Intents == nil || h.Intents.Inspect == nil) && h.Status.ProvisioningState == wire.StateAvailable
		}},
	}
	for _, lat := range []time.Duration{0, 200 * time.Millisecond} {
		for _, o := range ops {
			b.Run(fmt.Sprintf("%s/bmc-latency=%s", o.name, lat), func(b *testing.B) {
				e := newEnv(b, envOpts{bmcs: 1, latency: lat, simArgs: o.simArgs})
				e.apply(e.hostSpec("h", "r1", 0))
				e.startAgent("r1", "a1", append([]string{"--poll-interval", "100ms"}, o.agent...)...)
				e.waitHost("h", 120*time.Second, "available and on", func(h *wire.Host) error {
					if h.Status == nil || h.Status.ProvisioningState != wire.StateAvailable || !h.Status.PoweredOn {
						return fmt.Errorf("status %+v", h.Status)
					}
					return nil
				})
				var lats []time.Duration
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := o.send(e); err != nil {
						b.Fatal(err)
					}
					start := time.Now()
					for {
						h, err := e.admin.GetHost(ctx(b), "h")
						if err != nil {
							b.Fatal(err)
						}
						if h.Status != nil && o.done(h) {
							break
						}
						if time.Since(start) > 2*time.Minute {
							b.Fatalf("%s not done after 2 minutes: %+v %+v", o.name, h.Intents, h.Status)
						}
						time.Sleep(5 * time.Millisecond)
					}
					lats = append(lats, time.Since(start))
				}
				b.StopTimer()
				sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
				b.ReportMetric(float64(lats[len(lats)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lats[len(lats)-1].Microseconds())/1000, "max-ms")
			})
		}
	}
}
