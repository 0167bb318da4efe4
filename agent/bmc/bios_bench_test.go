package bmc

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// BenchmarkApplyBIOS100: BIOS settings applied to 100 hosts (bmcsim ilo
// profile, in process), what the direct path does per host while
// preparing: map the named switch, PATCH the settings that differ,
// power off and on (the reset that applies them), read back. 16 hosts at
// a time; each op starts from the factory settings. Figures (wall time
// per 100 hosts, Redfish requests per host):
//
//	go test -run '^$' -bench ApplyBIOS100 -benchtime 3x ./agent/bmc/
func BenchmarkApplyBIOS100(b *testing.B) {
	const hosts = 100
	sim := startSim(b, bmcsim.Config{Hosts: hosts, Profile: "ilo"})
	ctx := context.Background()
	req0 := 0
	for h := 0; h < hosts; h++ {
		req0 += sim.State(h).Requests
	}
	var wall time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Alternate the wanted values so every op changes them.
		want := []string{"Disabled", "Enabled"}[i%2]
		desired := map[string]string{"WorkloadProfile": []string{"Virtualization-MaxPerformance", "LowLatency"}[i%2]}
		start := time.Now()
		ch := make(chan int)
		var wg sync.WaitGroup
		for w := 0; w < 16; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for h := range ch {
					if err := applyBIOSOne(ctx, sim.Address(h), fmt.Sprintf("h%d", h), want, desired); err != nil {
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
		wall += time.Since(start)
	}
	b.StopTimer()
	reqs := 0
	for h := 0; h < hosts; h++ {
		reqs += sim.State(h).Requests
	}
	perHost := float64(reqs-req0) / float64(b.N*hosts)
	b.ReportMetric(perHost, "requests/host")
	b.ReportMetric(wall.Seconds()/float64(b.N), "s/100hosts")
	fmt.Printf("FIGURE bios-apply hosts=%d wall=%.2fs requests/host=%.1f\n", hosts, wall.Seconds()/float64(b.N), perHost)
}

func applyBIOSOne(ctx context.Context, addr, host, smt string, settings map[string]string) error {
	c, err := Dial(ctx, Target{Address: addr, Username: "admin", Password: "password"}, Options{})
	if err != nil {
		return err
	}
	defer func() { _ = c.Close(ctx) }()
	gd, _ := leasedGuard(time.Hour, nil)
	named, err := c.BIOSNames(ctx, map[string]bool{SettingSMT: smt == "Enabled"})
	if err != nil {
		return err
	}
	for k, v := range settings {
		named[k] = v
	}
	ap, err := c.ApplyBIOS(ctx, gd, host, named)
	if err != nil {
		return err
	}
	if ap.ResetNeeded {
		if err := c.SetPower(ctx, gd, host, false); err != nil {
			return err
		}
		if err := c.SetPower(ctx, gd, host, true); err != nil {
			return err
		}
	}
	_, err = c.BIOSResult(ctx, named)
	return err
}
