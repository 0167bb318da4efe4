package bmc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// Real ipmitool, through bmclib's IPMI provider and the guard, against
// openipmi's ipmi_sim; the simulator's own record proves each command
// arrived.
func TestOpenIPMISimOperations(t *testing.T) {
	sim := rig.StartIPMISim(t)
	ctx := testCtx(t)
	mem := &guard.MemoryAudit{}
	g, _ := leasedGuard(5*time.Minute, mem)
	opts := Options{Timeout: 30 * time.Second, MutationTimeout: 30 * time.Second}
	c, err := Dial(ctx, Target{Address: sim.Addr, Username: "admin", Password: "password"}, opts)
	if err != nil {
		t.Fatalf("dial %s: %v", sim.Addr, err)
	}
	defer c.Close(ctx)
	if c.Protocol() != "ipmi" {
		t.Fatalf("protocol %s; want ipmi", c.Protocol())
	}
	if on, err := c.PowerState(ctx); err != nil || on {
		t.Fatalf("power state = %v, %v; want off", on, err)
	}
	if got := sim.Commands(t); len(got) != 0 {
		t.Fatalf("open and power get sent commands to the BMC: %q", got)
	}
	if err := c.SetBootDevice(ctx, g, "i0", "pxe", false); err != nil {
		t.Fatalf("boot pxe: %v", err)
	}
	if got := sim.State(t, "boot"); got != "pxe" {
		t.Fatalf("simulator boot device %q; want pxe", got)
	}
	if err := c.SetPower(ctx, g, "i0", true); err != nil {
		t.Fatalf("power on: %v", err)
	}
	if on, err := c.PowerState(ctx); err != nil || !on {
		t.Fatalf("power state after on = %v, %v; want on", on, err)
	}
	if err := c.SetPower(ctx, g, "i0", false); err != nil {
		t.Fatalf("power off: %v", err)
	}
	if on, err := c.PowerState(ctx); err != nil || on {
		t.Fatalf("power state after off = %v, %v; want off", on, err)
	}
	if got, want := strings.Join(rig.Distinct(sim.Commands(t)), ","), "set boot pxe,set power 1,set power 0"; got != want {
		t.Fatalf("the BMC received %q; want %q", got, want)
	}
	var ops []string
	for _, r := range mem.Records() {
		ops = append(ops, r.Op+"="+r.Outcome)
	}
	if got, want := strings.Join(ops, ","), "boot pxe=ok,power on=ok,power off=ok"; got != want {
		t.Fatalf("guard audit %q; want %q", got, want)
	}
}

// A fenced call never reaches the BMC: with the lease gone, and with the
// host blocked, SetPower and SetBootDevice return ErrFenced and ipmi_sim's
// command log stays empty.
func TestOpenIPMISimFencedSendsNothing(t *testing.T) {
	sim := rig.StartIPMISim(t)
	ctx := testCtx(t)
	mem := &guard.MemoryAudit{}
	g, h := leasedGuard(5*time.Minute, mem)
	c, err := Dial(ctx, Target{Address: sim.Addr, Username: "admin", Password: "password"},
		Options{Timeout: 30 * time.Second, MutationTimeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("dial %s: %v", sim.Addr, err)
	}
	defer c.Close(ctx)
	g.Block("i0")
	if err := c.SetPower(ctx, g, "i0", true); !errors.Is(err, guard.ErrFenced) {
		t.Fatalf("power on of a blocked host: %v; want ErrFenced", err)
	}
	g.Unblock("i0")
	h.Clear()
	if err := c.SetPower(ctx, g, "i0", true); !errors.Is(err, guard.ErrFenced) {
		t.Fatalf("power on without a lease: %v; want ErrFenced", err)
	}
	if err := c.SetBootDevice(ctx, g, "i0", "pxe", false); !errors.Is(err, guard.ErrFenced) {
		t.Fatalf("boot pxe without a lease: %v; want ErrFenced", err)
	}
	if got := sim.Commands(t); len(got) != 0 {
		t.Fatalf("fenced calls reached the BMC: %q", got)
	}
	if on, err := c.PowerState(ctx); err != nil || on {
		t.Fatalf("power state = %v, %v; want off", on, err)
	}
	if n := len(mem.Records()); n != 3 {
		t.Fatalf("guard audit has %d records; want 3 refusals", n)
	}
}

func TestOpenIPMISimWrongPassword(t *testing.T) {
	sim := rig.StartIPMISim(t)
	ctx := testCtx(t)
	secret := "wrong-s3cret-pw"
	_, err := Dial(ctx, Target{Address: sim.Addr, Username: "admin", Password: secret}, Options{Timeout: 60 * time.Second})
	t.Logf("wrong password: %v", err)
	if !errors.Is(err, errclass.ErrAuth) {
		t.Fatalf("wrong password against ipmi_sim: %v; want errclass.ErrAuth", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Fatalf("error leaks the password: %v", err)
	}
	_, err = Dial(ctx, Target{Address: sim.Addr, Username: "nobody", Password: "password"}, Options{Timeout: 60 * time.Second})
	t.Logf("unknown user: %v", err)
	if !errors.Is(err, errclass.ErrAuth) {
		t.Fatalf("unknown user against ipmi_sim: %v; want errclass.ErrAuth", err)
	}
	if got := sim.Commands(t); len(got) != 0 {
		t.Fatalf("refused logins reached the chassis: %q", got)
	}
}

// The script's contract: N BMCs on consecutive ports, pid files, a busy
// port refused, and WATCH_PID stopping every BMC once that process is gone.
func TestOpenIPMISimScript(t *testing.T) {
	testenv.LookPath(t, "ipmitool")
	_, errS := os.Stat("/usr/bin/ipmi_sim")
	testenv.RequirePeer(t, errS == nil, "/usr/bin/ipmi_sim (openipmi)")
	script := filepath.Join(testenv.RepoRoot(t), "deploy", "peers", "ipmi_sim.sh")
	state := t.TempDir()
	t.Cleanup(func() { _ = exec.Command("/bin/sh", script, "stop", state).Run() })
	watched := exec.Command("sleep", "600")
	if err := watched.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = watched.Process.Kill(); _ = watched.Wait() })
	port := testenv.FreePorts(t, "127.0.0.1", 2)
	cmd := exec.Command("/bin/sh", script, "start", state, fmt.Sprint(port), "2")
	cmd.Env = append(os.Environ(), fmt.Sprintf("WATCH_PID=%d", watched.Process.Pid))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ipmi_sim.sh start: %v\n%s", err, out)
	}
	var pids []int
	for i := 0; i < 2; i++ {
		out, err := exec.Command("ipmitool", "-I", "lanplus", "-H", "127.0.0.1", "-p", fmt.Sprint(port+i),
			"-U", "admin", "-P", "password", "-C", "3", "-N", "2", "-R", "3", "chassis", "power", "status").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "off") {
			t.Fatalf("bmc%d on port %d: %v: %s", i, port+i, err, out)
		}
		b, err := os.ReadFile(filepath.Join(state, fmt.Sprintf("bmc%d", i), "ipmi_sim.pid"))
		if err != nil {
			t.Fatalf("pid file of bmc%d: %v", i, err)
		}
		var pid int
		if _, err := fmt.Sscan(string(b), &pid); err != nil || pid <= 0 {
			t.Fatalf("pid file of bmc%d holds %q", i, b)
		}
		pids = append(pids, pid)
	}
	out, err := exec.Command("/bin/sh", script, "start", t.TempDir(), fmt.Sprint(port+1), "1").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "already in use") {
		t.Fatalf("second start on a busy port: %v\n%s; want a refusal naming the port", err, out)
	}
	_ = watched.Process.Kill()
	_ = watched.Wait()
	testenv.Eventually(t, 60*time.Second, "WATCH_PID stopping both BMCs", func() error {
		for _, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				return fmt.Errorf("ipmi_sim pid %d still runs", pid)
			}
		}
		return nil
	})
	if out, err := exec.Command("/bin/sh", script, "status", state).CombinedOutput(); err == nil {
		t.Fatalf("status after WATCH_PID died: exit 0, want 1\n%s", out)
	}
}

// BenchmarkOpenIPMISimPowerState: one power read (ipmitool lanplus -C 3,
// through bmclib) on an open Conn against ipmi_sim.
func BenchmarkOpenIPMISimPowerState(b *testing.B) {
	sim := rig.StartIPMISim(b)
	ctx := testCtx(b)
	c, err := Dial(ctx, Target{Address: sim.Addr, Username: "admin", Password: "password"}, Options{Timeout: 30 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(ctx)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.PowerState(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenIPMISimPowerCycle: power on then off through the guard
// against ipmi_sim (two ipmitool runs plus ipmi_sim's chassis_control).
func BenchmarkOpenIPMISimPowerCycle(b *testing.B) {
	sim := rig.StartIPMISim(b)
	ctx := testCtx(b)
	g, _ := leasedGuard(time.Hour, nil)
	c, err := Dial(ctx, Target{Address: sim.Addr, Username: "admin", Password: "password"},
		Options{Timeout: 30 * time.Second, MutationTimeout: 30 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(ctx)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := c.SetPower(ctx, g, "i0", true); err != nil {
			b.Fatal(err)
		}
		if err := c.SetPower(ctx, g, "i0", false); err != nil {
			b.Fatal(err)
		}
	}
}
