package ironic_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/agent/provisioner/ironic"
	"github.com/rackfence/rackfence/shared/api"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/shared/testenv"
)

// startOpenIPMISim starts one openipmi ipmi_sim BMC through
// deploy/peers/ipmi_sim.sh (stopped on cleanup, or when this test binary
// dies: WATCH_PID) and returns its port and its state directory, whose
// commands.log records every power/boot command the BMC received.
func startOpenIPMISim(t *testing.T) (port int, dir string) {
	t.Helper()
	testenv.LookPath(t, "ipmitool")
	_, errS := os.Stat("/usr/bin/ipmi_sim")
	testenv.RequirePeer(t, errS == nil, "/usr/bin/ipmi_sim (openipmi)")
	script := filepath.Join(testenv.RepoRoot(t), "deploy", "peers", "ipmi_sim.sh")
	state := t.TempDir()
	t.Cleanup(func() {
		if out, err := exec.Command("/bin/sh", script, "stop", state).CombinedOutput(); err != nil {
			t.Errorf("ipmi_sim.sh stop: %v\n%s", err, out)
		}
	})
	// FreePort checks TCP; the script refuses a UDP port already in use, so
	// a rare clash just costs another try.
	for try := 0; ; try++ {
		port = testenv.FreePort(t, "127.0.0.1")
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		cmd := exec.CommandContext(ctx, "/bin/sh", script, "start", state, fmt.Sprint(port), "1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("WATCH_PID=%d", os.Getpid()), "IPMI_SIM_START_TIMEOUT=60")
		out, err := cmd.CombinedOutput()
		cancel()
		if err == nil {
			t.Logf("%s", strings.TrimSpace(string(out)))
			return port, filepath.Join(state, "bmc0")
		}
		if try >= 3 || !strings.Contains(string(out), "already in use") {
			t.Fatalf("ipmi_sim.sh start: %v\n%s", err, out)
		}
	}
}

// simCommands are the power/boot commands ipmi_sim's chassis received,
// "set PARM VALUE" each.
func simCommands(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "commands.log"))
	if err != nil {
		t.Fatalf("read commands.log: %v", err)
	}
	var cmds []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if _, rest, ok := strings.Cut(line, " "); ok {
			cmds = append(cmds, rest)
		}
	}
	return cmds
}

// Ironic's ipmi driver (its own ipmitool, cipher suite 3) against openipmi's
// ipmi_sim: manage reads the simulator's power state without commanding
// it, power on/off through Ironic reach the simulator, and a fenced power
// call reaches neither Ironic nor the BMC.
func TestIronicIPMIDriverAgainstOpenIPMISim(t *testing.T) {
	url := needIronic(t)
	port, dir := startOpenIPMISim(t)
	p := newProv(t, url, nil)
	ctx := ctxT(t)
	h := provisioner.Host{
		Name:           uniqName("ipmisim"),
		BMC:            api.BMC{Address: fmt.Sprintf("ipmi://127.0.0.1:%d", port)},
		Username:       "admin",
		Password:       "password",
		BootMACAddress: fakeHost("x").BootMACAddress,
	}
	start := time.Now()
	h.ProvisioningID = must(t, "register")(p.Register(ctx, h)).ProvisioningID
	t.Logf("register (enroll, manage: Ironic reads power from ipmi_sim): %s", time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() {
		dctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if _, err := p.Delete(dctx, h); err != nil {
			t.Logf("delete %s: %v", h.Name, err)
		}
	})
	n := wantState(t, url, h.ProvisioningID, "manageable")
	if n.Driver != "ipmi" || n.DriverInfo["ipmi_cipher_suite"] != "3" || n.PowerState != "power off" {
		t.Fatalf("node driver %q, cipher suite %v, power %q; want ipmi, 3 and the simulator's power off",
			n.Driver, n.DriverInfo["ipmi_cipher_suite"], n.PowerState)
	}
	if got := simCommands(t, dir); len(got) != 0 {
		t.Fatalf("registration sent commands to the BMC: %q", got)
	}

	start = time.Now()
	if r := must(t, "power on")(p.SetPower(ctx, h, true)); r.PoweredOn == nil || !*r.PoweredOn {
		t.Fatalf("power on through Ironic: %+v", r)
	}
	t.Logf("power on through Ironic: %s", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	if r := must(t, "power off")(p.SetPower(ctx, h, false)); r.PoweredOn == nil || *r.PoweredOn {
		t.Fatalf("power off through Ironic: %+v", r)
	}
	t.Logf("power off through Ironic: %s", time.Since(start).Round(time.Millisecond))
	if got, want := strings.Join(simDistinct(simCommands(t, dir)), ","), "set power 1,set power 0"; got != want {
		t.Fatalf("the BMC received %q through Ironic; want %q", got, want)
	}

	// Without a lease the provisioner refuses before asking Ironic.
	fenced := newProv(t, url, func(c *ironic.Config) {
		c.Guard = bmc.NewGuard(fence.NewHolder(nil), nil)
	})
	if _, err := fenced.SetPower(ctx, h, true); !errors.Is(err, bmc.ErrFenced) {
		t.Fatalf("power on without a lease: %v; want ErrFenced", err)
	}
	n = wantState(t, url, h.ProvisioningID, "manageable")
	if n.PowerState != "power off" || n.TargetPowerState != "" {
		t.Fatalf("Ironic power %q (target %q) after a fenced call; want power off", n.PowerState, n.TargetPowerState)
	}
	if got, want := strings.Join(simDistinct(simCommands(t, dir)), ","), "set power 1,set power 0"; got != want {
		t.Fatalf("the BMC received %q; want %q (nothing after the fenced call)", got, want)
	}
}

// simDistinct drops a command equal to the one before it: ipmitool resends a
// request it got no answer to within its retry interval (a loaded machine),
// and ipmi_sim may execute the copy. Power and boot settings are
// idempotent, so a repeat is not a second operation.
func simDistinct(cmds []string) []string {
	var out []string
	for i, c := range cmds {
		if i == 0 || c != cmds[i-1] {
			out = append(out, c)
		}
	}
	return out
}
