package bmc

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// Real ipmitool, through bmclib's IPMI provider, against a real IPMI
// simulator from Debian.
func TestIPMIOperations(t *testing.T) {
	sim := rig.StartFakeBMC(t)
	addr, p := sim.Addr, sim.Proc
	ctx := testCtx(t)
	mem := &guard.MemoryAudit{}
	g, _ := leasedGuard(5*time.Minute, mem)
	c, err := Dial(ctx, Target{Address: addr, Username: "admin", Password: "password"}, Options{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer c.Close(ctx)
	if c.Protocol() != "ipmi" {
		t.Fatalf("protocol %s", c.Protocol())
	}
	if on, err := c.PowerState(ctx); err != nil || on {
		t.Fatalf("power state = %v, %v; want off", on, err)
	}
	if err := c.SetBootDevice(ctx, g, "i0", "pxe", false); err != nil {
		t.Fatalf("boot pxe: %v", err)
	}
	if err := c.SetPower(ctx, g, "i0", true); err != nil {
		t.Fatalf("power on: %v", err)
	}
	if on, err := c.PowerState(ctx); err != nil || !on {
		t.Fatalf("power state after on = %v, %v", on, err)
	}
	if err := c.SetPower(ctx, g, "i0", false); err != nil {
		t.Fatalf("power off: %v", err)
	}
	if on, err := c.PowerState(ctx); err != nil || on {
		t.Fatalf("power state after off = %v, %v", on, err)
	}
	if err := c.InsertMedia(ctx, g, "i0", "http://x/y.iso"); !errors.Is(err, errclass.ErrUnsupported) {
		t.Fatalf("virtual media over IPMI: %v; want errclass.ErrUnsupported", err)
	}
	if _, err := c.Inventory(ctx); !errors.Is(err, errclass.ErrUnsupported) {
		t.Fatalf("inventory over IPMI: %v; want errclass.ErrUnsupported", err)
	}
	if !strings.Contains(p.Output(), "powered on") {
		t.Fatalf("the simulator did not see the power-on:\n%s", p.Output())
	}
	// A cold reset of fakebmc's "BMC" makes it exit: proof it arrived.
	_ = c.resetBMC(ctx, g, "i0")
	testenv.Eventually(t, 60*time.Second, "fakebmc exiting on BMC cold reset", func() error {
		if !p.Exited() {
			return errors.New("still running")
		}
		return nil
	})
	ops := []string{}
	for _, r := range mem.Records() {
		ops = append(ops, r.Op+"="+strings.SplitN(r.Outcome, ":", 2)[0])
	}
	if got := strings.Join(ops, ","); !strings.HasPrefix(got, "boot pxe=ok,power on=ok,power off=ok,bmc reset=") {
		t.Fatalf("guard audit: %s", got)
	}
}

func TestIPMIWrongPasswordAndUnreachable(t *testing.T) {
	addr := rig.StartFakeBMC(t).Addr
	ctx := testCtx(t)
	secret := "wrong-s3cret-pw"
	_, err := Dial(ctx, Target{Address: addr, Username: "admin", Password: secret}, Options{Timeout: 60 * time.Second})
	t.Logf("wrong password: %v", err)
	if !errors.Is(err, errclass.ErrAuth) {
		t.Fatalf("wrong password over IPMI: %v; want errclass.ErrAuth", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Fatalf("error leaks the password: %v", err)
	}
	closed := fmt.Sprintf("ipmi://127.0.0.1:%d", testenv.FreePort(t, "127.0.0.1"))
	// ipmitool retries for about a minute on silence; the call's deadline
	// cuts it short, and either way the class is transient.
	_, err = Dial(ctx, Target{Address: closed, Username: "admin", Password: "password"}, Options{Timeout: 8 * time.Second})
	t.Logf("unreachable: %v", err)
	if !errors.Is(err, errclass.ErrTransient) {
		t.Fatalf("nothing listening over IPMI: %v; want errclass.ErrTransient", err)
	}
}
