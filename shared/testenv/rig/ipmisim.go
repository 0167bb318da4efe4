package rig

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/testenv"
)

// IPMISim is one BMC of openipmi's ipmi_sim started by
// deploy/peers/ipmi_sim.sh: a real IPMI LAN implementation whose
// chassis_control records every power/boot command it received.
type IPMISim struct {
	Addr string // ipmi://127.0.0.1:PORT
	Port int
	Dir  string // STATEDIR/bmc0: power, boot, commands.log
}

// StartIPMISim starts one ipmi_sim BMC (user admin / password password) and
// stops it on cleanup; WATCH_PID makes the script stop it if the test
// binary is killed before cleanup runs. A missing ipmitool or ipmi_sim
// fails in CI and skips loudly elsewhere.
func StartIPMISim(t testing.TB) IPMISim {
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
		port := testenv.FreePort(t, "127.0.0.1")
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		cmd := exec.CommandContext(ctx, "/bin/sh", script, "start", state, fmt.Sprint(port), "1")
		cmd.Env = append(os.Environ(), fmt.Sprintf("WATCH_PID=%d", os.Getpid()), "IPMI_SIM_START_TIMEOUT=60")
		out, err := cmd.CombinedOutput()
		cancel()
		if err == nil {
			t.Logf("%s", strings.TrimSpace(string(out)))
			return IPMISim{Addr: fmt.Sprintf("ipmi://127.0.0.1:%d", port), Port: port, Dir: filepath.Join(state, "bmc0")}
		}
		if try >= 3 || !strings.Contains(string(out), "already in use") {
			t.Fatalf("ipmi_sim.sh start: %v\n%s", err, out)
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
