package bmc

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// BenchmarkRegisterHosts: what the direct provisioner asks of 64 BMCs
// between registration and available (login, power read, details,
// inventory, logout), 8 hosts at a time, each op starting with no
// connection to any BMC (the transports dropped), as an agent meeting new
// hosts. cpu-ms/host is the process's CPU (agent side and the in-process
// simulator together) per host. Figures:
//
//	go test -run '^$' -bench RegisterHosts -benchtime 20x ./agent/bmc/
func BenchmarkRegisterHosts(b *testing.B) {
	for _, tls := range []bool{false, true} {
		b.Run(map[bool]string{false: "http", true: "tls"}[tls], func(b *testing.B) {
			const hosts = 64
			sim := startSim(b, bmcsim.Config{Hosts: hosts, TLS: tls})
			ctx := context.Background()
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				dropTransports()
				ch := make(chan int)
				var wg sync.WaitGroup
				for w := 0; w < 8; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for h := range ch {
							if err := registerOne(ctx, sim.Address(h)); err != nil {
								b.Error(err)
							}
						}
					}()
				}
				for h := 0; h < hosts; h++ {
					ch <- h
				}
				close(ch)
				wg.Wait()
			}
			b.StopTimer()
			perHost := float64((cpuTime() - cpu0).Microseconds()) / 1000 / float64(b.N*hosts)
			b.ReportMetric(perHost, "cpu-ms/host")
			conns := 0
			for h := 0; h < hosts; h++ {
				conns += sim.State(h).Connections
			}
			b.ReportMetric(float64(conns)/float64(b.N*hosts), "conns/host")
			fmt.Printf("FIGURE register tls=%v cpu-ms/host=%.3f conns/host=%.1f\n", tls, perHost, float64(conns)/float64(b.N*hosts))
		})
	}
}

func registerOne(ctx context.Context, addr string) error {
	c, err := Dial(ctx, Target{Address: addr, Username: "admin", Password: "password", Insecure: true}, Options{})
	if err != nil {
		return err
	}
	defer func() { _ = c.Close(ctx) }()
	if _, err := c.PowerState(ctx); err != nil {
		return err
	}
	if _, err := c.Details(ctx); err != nil {
		return err
	}
	_, err = c.Inventory(ctx)
	return err
}

// dropTransports closes every kept BMC connection and forgets the
// transports (and their TLS session caches).
func dropTransports() {
	transportsMu.Lock()
	defer transportsMu.Unlock()
	for _, t := range transports {
		t.CloseIdleConnections()
	}
	transports = map[bool]*http.Transport{}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
