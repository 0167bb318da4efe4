package rig

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/testkit/testenv"
)

// Two IPMI simulators, both real IPMI LAN (RMCP+/lanplus) implementations
// driven through real ipmitool: openipmi's ipmi_sim (IPMISim, which
// records every chassis command in a file) and Debian's pyghmi fakebmc
// (FakeBMC, which prints its power commands and exits on a BMC cold
// reset).

// IPMISim is one BMC of openipmi's ipmi_sim started by
// deploy/peers/ipmi_sim.sh: a real IPMI LAN implementation whose
// chassis_control records every power/boot command it received.
type IPMISim struct {
	Addr string // ipmi://127.0.0.1:PORT
	Port int
	Dir  string // STATEDIR/bmc0: power, boot, commands.log
}

// StartIPMISim starts one ipmi_sim BMC (user admin / password password) and
// stops it on cleanup. It skips under -short; a missing ipmitool or
// ipmi_sim fails in CI and skips loudly elsewhere.
func StartIPMISim(t testing.TB) IPMISim {
	t.Helper()
	testenv.LookPath(t, "ipmitool")
	_, errS := os.Stat("/usr/bin/ipmi_sim")
	testenv.RequirePeer(t, errS == nil, "/usr/bin/ipmi_sim (openipmi)")
	state := t.TempDir()
	t.Cleanup(func() {
		if _, err := runPeerScript("ipmi_sim.sh", nil, "stop", state); err != nil {
			t.Error(err)
		}
	})
	// FreePort checks TCP; the script refuses a UDP port already in use, so
	// a rare clash just costs another try.
	for try := 0; ; try++ {
		port := testenv.FreePort(t, "127.0.0.1")
		out, err := runPeerScript("ipmi_sim.sh", []string{"IPMI_SIM_START_TIMEOUT=60"}, "start", state, fmt.Sprint(port), "1")
		if err == nil {
			t.Logf("%s", strings.TrimSpace(out))
			return IPMISim{Addr: fmt.Sprintf("ipmi://127.0.0.1:%d", port), Port: port, Dir: filepath.Join(state, "bmc0")}
		}
		if try >= 3 || !strings.Contains(out, "already in use") {
			t.Fatal(err)
		}
	}
}

// Commands returns the power/boot commands the BMC received, one
// "set PARM VALUE" per element (the timestamp cut off).
func (s IPMISim) Commands(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.Dir, "commands.log"))
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

// State returns the content of the simulator's power or boot file.
func (s IPMISim) State(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.Dir, name))
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return strings.TrimSpace(string(b))
}

// Distinct drops back-to-back repeats: under load ipmitool may retransmit a
// request and ipmi_sim run it twice; power and boot settings are
// idempotent, so a repeat is not a second operation.
func Distinct(cmds []string) []string {
	var out []string
	for i, c := range cmds {
		if i == 0 || c != cmds[i-1] {
			out = append(out, c)
		}
	}
	return out
}

// FakeBMC is one BMC of Debian's python3-pyghmi fakebmc, run in the
// foreground by deploy/peers/ipmisim.sh (user admin / password password).
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
	f.Proc = testenv.Start(t, "fakebmc", "/bin/sh", nil, peerScript("ipmisim.sh"), fmt.Sprint(f.Port))
	testenv.Eventually(t, peerStartTimeout, "fakebmc answering ipmitool", func() error {
		if f.Proc.Exited() {
			t.Fatalf("ipmisim.sh exited:\n%s", f.Proc.Output())
		}
		return ipmitoolPowerStatus(f.Port)
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
