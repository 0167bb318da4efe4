package ironic_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/api"
	"github.com/rackfence/rackfence/shared/testenv"
)

// startIPMISim runs deploy/peers/ipmisim.sh (Debian's pyghmi fakebmc; it
// prints a line for every power command it executes) and returns its port
// once ipmitool gets an answer.
func startIPMISim(t *testing.T) (int, *testenv.Process) {
	t.Helper()
	testenv.LookPath(t, "ipmitool")
	ok := exec.Command("/usr/bin/python3", "-c", "import pyghmi.cmd.fakebmc").Run() == nil
	testenv.RequirePeer(t, ok, "python3-pyghmi (fakebmc) importable by /usr/bin/python3")
	script := filepath.Join(testenv.RepoRoot(t), "deploy", "peers", "ipmisim.sh")
	port := testenv.FreePort(t, "127.0.0.1")
	p := testenv.Start(t, "ipmisim", "/bin/sh", nil, script, fmt.Sprint(port))
	testenv.Eventually(t, 60*time.Second, "fakebmc answering", func() error {
		if p.Exited() {
			t.Fatalf("ipmisim.sh exited:\n%s", p.Output())
		}
		out, err := exec.Command("ipmitool", "-I", "lanplus", "-H", "127.0.0.1", "-p", fmt.Sprint(port),
			"-U", "admin", "-P", "password", "-C", "3", "-N", "1", "-R", "1", "chassis", "power", "status").CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	})
	return port, p
}

// powerLines are the simulator's lines for power commands it executed.
func powerLines(p *testenv.Process) []string {
	var out []string
	for _, l := range strings.Split(p.Output(), "\n") {
		if strings.Contains(l, "powered on") || strings.Contains(l, "remove power") || strings.Contains(l, "shut down") {
			out = append(out, l)
		}
	}
	return out
}

// The ipmi driver (Ironic's ipmitool, cipher suite 3) against an IPMI
// simulator: manage verifies through it, power on/off reaches it, adopt,
// detach and re-attach send it no power command.
func TestIPMIDriverAgainstSimulator(t *testing.T) {
	url := needIronic(t)
	port, sim := startIPMISim(t)
	p := newProv(t, url, nil)
	ctx := ctxT(t)
	h := provisioner.Host{
		Name:           uniqName("ipmi"),
		BMC:            api.BMC{Address: fmt.Sprintf("ipmi://127.0.0.1:%d", port)},
		Username:       "admin",
		Password:       "password",
		BootMACAddress: fakeHost("x").BootMACAddress,
	}
	h.ProvisioningID = must(t, "register")(p.Register(ctx, h)).ProvisioningID
	n := wantState(t, url, h.ProvisioningID, "manageable")
	if n.Driver != "ipmi" || n.DriverInfo["ipmi_cipher_suite"] != "3" || n.PowerState != "power off" {
		t.Fatalf("node driver %q, cipher suite %v, power %q; want ipmi, 3 and the simulator's power off",
			n.Driver, n.DriverInfo["ipmi_cipher_suite"], n.PowerState)
	}
	if l := powerLines(sim); len(l) != 0 {
		t.Fatalf("registration sent power commands: %v", l)
	}

	must(t, "power on")(p.SetPower(ctx, h, true))
	must(t, "power off")(p.SetPower(ctx, h, false))
	must(t, "power on")(p.SetPower(ctx, h, true))
	l := powerLines(sim)
	if len(l) != 3 || !strings.Contains(l[0], "powered on") || !strings.Contains(l[1], "remove power") {
		t.Fatalf("simulator executed %v, want on, off, on", l)
	}

	must(t, "adopt")(p.Adopt(ctx, h))
	wantState(t, url, h.ProvisioningID, "active")
	must(t, "detach")(p.Detach(ctx, h))
	if n, _ := rawNode(t, url, h.ProvisioningID); n != nil {
		t.Fatalf("node still in Ironic after detach: %s", n.ProvisionState)
	}
	h.ProvisioningID = ""
	h.ProvisioningID = must(t, "re-register")(p.Register(ctx, h)).ProvisioningID
	must(t, "re-adopt")(p.Adopt(ctx, h))
	n = wantState(t, url, h.ProvisioningID, "active")
	if n.PowerState != "power on" {
		t.Fatalf("power %q after re-attach, want power on", n.PowerState)
	}
	if l2 := powerLines(sim); len(l2) != len(l) {
		t.Fatalf("adopt/detach/attach sent power commands: %v", l2[len(l):])
	}
	must(t, "delete")(p.Delete(ctx, h))
}
