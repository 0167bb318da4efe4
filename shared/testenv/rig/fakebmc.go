package rig

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/testenv"
)

// FakeBMC is one IPMI (RMCP+/lanplus) BMC of Debian's python3-pyghmi
// fakebmc, run by deploy/peers/ipmisim.sh (user admin / password
// password); it prints a line for every power command it executes.
type FakeBMC struct {
	Addr string // ipmi://127.0.0.1:PORT
	Port int
	Proc *testenv.Process
}

// StartFakeBMC starts a fakebmc on a free UDP port, waits until ipmitool
// gets an answer from it and stops it on cleanup. It skips under -short; a
// missing ipmitool or pyghmi fails in CI and skips loudly elsewhere.
func StartFakeBMC(t testing.TB) *FakeBMC {
	t.Helper()
	testenv.LookPath(t, "ipmitool")
	testenv.RequirePython(t, "pyghmi.cmd.fakebmc", "python3-pyghmi")
	f := &FakeBMC{Port: testenv.FreePort(t, "127.0.0.1")}
	f.Addr = fmt.Sprintf("ipmi://127.0.0.1:%d", f.Port)
	f.Proc = testenv.Start(t, "fakebmc", "/bin/sh", nil,
		filepath.Join(testenv.RepoRoot(t), "deploy", "peers", "ipmisim.sh"), fmt.Sprint(f.Port))
	testenv.Eventually(t, 60*time.Second, "fakebmc answering ipmitool", func() error {
		if f.Proc.Exited() {
			t.Fatalf("ipmisim.sh exited:\n%s", f.Proc.Output())
		}
		out, err := exec.Command("ipmitool", "-I", "lanplus", "-H", "127.0.0.1", "-p", fmt.Sprint(f.Port),
			"-U", "admin", "-P", "password", "-C", "3", "-N", "1", "-R", "1", "chassis", "power", "status").CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	})
	return f
}

// PowerLines are the fakebmc's lines for the power commands it executed
// (power on, power off, shut down).
func (f *FakeBMC) PowerLines() []string {
	var out []string
	for _, l := range strings.Split(f.Proc.Output(), "\n") {
		if strings.Contains(l, "powered on") || strings.Contains(l, "remove power") || strings.Contains(l, "shut down") {
			out = append(out, l)
		}
	}
	return out
}
