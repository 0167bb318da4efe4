package direct_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/agent/provisioner/direct"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
)

// TestIPMIHost: an ipmi:// host through real ipmitool against Debian's
// fakebmc (rig.StartFakeBMC): inspection records the boot MAC,
// provisioning boots once from the network and powers on, deprovisioning
// powers off.
func TestIPMIHost(t *testing.T) {
	sim := rig.StartFakeBMC(t)

	holder := fence.NewHolder(nil)
	holder.Set(fence.Lease{Rack: "r1", Holder: "t", Epoch: 3, TTL: time.Hour, Deadline: time.Now().Add(time.Hour)})
	audit := &guard.MemoryAudit{}
	p, err := direct.New(direct.Config{Guard: guard.NewGuard(holder, audit), BMC: bmc.Options{Timeout: 30 * time.Second, MutationTimeout: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	h := provisioner.Host{Name: "i0", BMC: wire.BMC{Address: sim.Addr},
		Username: "admin", Password: "password", BootMACAddress: "52:54:00:AA:00:01",
		Image: &wire.Image{URL: "http://images.example/os.img"}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	if res, err := p.Register(ctx, h); err != nil {
		t.Fatalf("register over IPMI: %v", err)
	} else if bd := res.BMCDetails; bd == nil || !reflect.DeepEqual(*bd, wire.BMCDetails{Protocol: "ipmi", Auth: "ipmi"}) {
		t.Fatalf("register over IPMI: BMC details %+v; want protocol and auth ipmi", res.BMCDetails)
	}
	res, err := p.Inspect(ctx, h)
	if err != nil {
		t.Fatalf("inspect over IPMI: %v", err)
	}
	if hw := res.HardwareDetails; hw == nil || len(hw.NICs) != 1 || hw.NICs[0].MAC != "52:54:00:aa:00:01" {
		t.Fatalf("inspect over IPMI gave %+v, want the boot MAC", res.HardwareDetails)
	}
	if _, err := p.Provision(ctx, h); err != nil {
		t.Fatalf("provision over IPMI: %v", err)
	}
	if r, err := p.PowerState(ctx, h); err != nil || r.PoweredOn == nil || !*r.PoweredOn {
		t.Fatalf("after provisioning power is %v, %v; want on", r.PoweredOn, err)
	}
	// Soft power-off over IPMI (chassis power soft), then on again.
	soft, err := p.SoftPowerOff(ctx, h)
	for i := 0; err == nil && soft.InProgress && i < 100; i++ {
		time.Sleep(100 * time.Millisecond)
		soft, err = p.SoftPowerOff(ctx, h)
	}
	if err != nil || soft.InProgress || soft.PoweredOn == nil || *soft.PoweredOn {
		t.Fatalf("soft power-off over IPMI: %v %+v; want off", err, soft)
	}
	if _, err := p.SetPower(ctx, h, true); err != nil {
		t.Fatalf("power on over IPMI after the soft power-off: %v", err)
	}
	if _, err := p.Deprovision(ctx, h); err != nil {
		t.Fatalf("deprovision over IPMI: %v", err)
	}
	if r, err := p.PowerState(ctx, h); err != nil || r.PoweredOn == nil || *r.PoweredOn {
		t.Fatalf("after deprovisioning power is %v, %v; want off", r.PoweredOn, err)
	}
	var ops []string
	for _, r := range audit.Records() {
		ops = append(ops, r.Op+"="+strings.SplitN(r.Outcome, ":", 2)[0])
	}
	if got := strings.Join(ops, ","); got != "boot pxe=ok,power on=ok,power soft off=ok,power on=ok,power off=ok" {
		t.Fatalf("guarded calls %s, want boot pxe, power on, power soft off, power on, power off", got)
	}
}
