package direct_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/agent/provisioner/direct"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestProfileFigures prints, per simulator profile and system, what the
// agent asks of the BMC: the boot method provisioning uses by default
// (the direct provisioner's choice from what the system offers), the
// Redfish requests to register and inspect a host (a fresh session:
// login, power, details, inventory, logout), the requests of one health
// read and one power read on a Conn in use (the status refresh), and the
// process CPU per host for register + inspect + health (the in-process
// simulator's share included). Figures, not assertions (docs/performance.md,
// "BMC requests per profile"):
//
//	go test -count=1 -run TestProfileFigures -v ./agent/provisioner/direct/
func TestProfileFigures(t *testing.T) {
	testenv.SkipShort(t)
	const rounds = 20
	ctx := context.Background()
	holder := fence.NewHolder(nil)
	holder.Set(fence.Lease{Rack: "r1", Holder: "t", Epoch: 1, TTL: time.Hour, Deadline: time.Now().Add(time.Hour)})
	var table []string
	for _, prof := range bmcsim.Profiles() {
		sim, err := bmcsim.Start(bmcsim.Config{Hosts: 1, Profile: prof})
		if err != nil {
			t.Fatal(err)
		}
		for j, addr := range sim.SystemAddresses(0) {
			h := provisioner.Host{Name: fmt.Sprintf("%s-%d", prof, j), Username: "admin", Password: "password", BMC: wire.BMC{Address: addr}}
			once := func() int {
				p, err := direct.New(direct.Config{Guard: guard.NewGuard(holder, nil), BMC: bmc.Options{Timeout: 30 * time.Second}})
				if err != nil {
					t.Fatal(err)
				}
				before := sim.State(0).Requests
				if _, err := p.Register(ctx, h); err != nil {
					t.Fatalf("%s: register: %v", h.Name, err)
				}
				if _, err := p.Inspect(ctx, h); err != nil {
					t.Fatalf("%s: inspect: %v", h.Name, err)
				}
				_ = p.Close(ctx)
				return sim.State(0).Requests - before
			}
			regInspect := once()

			c, err := bmc.Dial(ctx, bmc.Target{Address: addr, Username: "admin", Password: "password"}, bmc.Options{Timeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			o, err := c.BootOffer(ctx)
			if err != nil {
				t.Fatal(err)
			}
			boot := wire.BootMethodPXE
			switch {
			case o.VirtualMedia:
				boot = wire.BootMethodVirtualMedia
			case o.UEFIHTTP:
				boot = wire.BootMethodUEFIHTTP
			}
			if _, err := c.Health(ctx); err != nil { // discovery out of the count
				t.Fatal(err)
			}
			before := sim.State(0).Requests
			if _, err := c.Health(ctx); err != nil {
				t.Fatal(err)
			}
			healthReqs := sim.State(0).Requests - before
			before = sim.State(0).Requests
			if _, err := c.Power(ctx); err != nil {
				t.Fatal(err)
			}
			powerReqs := sim.State(0).Requests - before

			cpu0 := cpuTime()
			for i := 0; i < rounds; i++ {
				once()
				if _, err := c.Health(ctx); err != nil {
					t.Fatal(err)
				}
			}
			cpu := float64((cpuTime() - cpu0).Microseconds()) / 1000 / rounds
			_ = c.Close(ctx)
			name := prof
			if len(sim.SystemAddresses(0)) > 1 {
				name = fmt.Sprintf("%s (%s)", prof, addr[strings.LastIndex(addr, "/")+1:])
			}
			table = append(table, fmt.Sprintf("| %s | %s | %d | %d | %d | %.1f |", name, boot, regInspect, healthReqs, powerReqs, cpu))
		}
		sim.Close()
	}
	t.Log("\n| profile | boot method | register + inspect | health read | power read | CPU ms/host |\n|---|---|---|---|---|---|\n" + strings.Join(table, "\n"))
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
