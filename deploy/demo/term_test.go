package demo

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestDemoStopsOnTerm: `kill PID` of the script (SIGTERM to it alone, not
// to its process group) while it prints the hosts ends it and every
// process it started at once, not when the host watch ends by itself.
// Its exit (exit code 143) also means no child still holds its output.
func TestDemoStopsOnTerm(t *testing.T) {
	testenv.LookPath(t, "bash")
	bin := t.TempDir()
	for _, b := range binaries {
		if err := os.Symlink(testenv.Binary(t, b), filepath.Join(bin, b)); err != nil {
			t.Fatal(err)
		}
	}
	httpPort := testenv.FreePort(t, "127.0.0.1")
	raftPort := testenv.FreePort(t, "127.0.0.1")
	bmcPort := freeRange(t, 25)
	metricsPort := testenv.FreePorts(t, "127.0.0.1", 2)
	artifactPort := testenv.FreePort(t, "127.0.0.1")
	env := []string{
		"RACKFENCE_BIN=" + bin, "DEMO_DIR=" + filepath.Join(t.TempDir(), "demo"), "DEMO_DURATION=900",
		fmt.Sprintf("DEMO_HTTP_PORT=%d", httpPort), fmt.Sprintf("DEMO_RAFT_PORT=%d", raftPort),
		fmt.Sprintf("DEMO_BMC_PORT=%d", bmcPort), fmt.Sprintf("DEMO_METRICS_PORT=%d", metricsPort),
		fmt.Sprintf("DEMO_ARTIFACT_PORT=%d", artifactPort),
	}
	p := testenv.Start(t, "demo", filepath.Join(testenv.RepoRoot(t), "deploy", "demo", "run.sh"), env)
	// Whatever happens, nothing of the demo outlives the test.
	t.Cleanup(func() { _ = syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL) })
	testenv.Eventually(t, 3*time.Minute, "the demo printing hosts", func() error {
		if p.Exited() {
			t.Fatalf("the demo exited early:\n%s", p.Output())
		}
		// The watch's first listing follows the line announcing it.
		out := p.Output()
		_, after, ok := strings.Cut(out, "hosts (printed when they change")
		if !ok || !strings.Contains(after, "r1-web") {
			return fmt.Errorf("no host listing yet")
		}
		return nil
	})
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Stopping five processes takes seconds; the watch would run for
	// DEMO_DURATION (15 minutes).
	err, exited := p.Wait(2 * time.Minute)
	if !exited {
		t.Fatalf("the demo did not stop on SIGTERM within 2 minutes:\n%s", p.Output())
	}
	if code := p.Cmd.ProcessState.ExitCode(); code != 143 {
		t.Errorf("exit code after SIGTERM: %d (%v), want 143", code, err)
	}
	if out := p.Output(); !strings.Contains(out, "stopping 5 processes") {
		t.Errorf("demo output lacks %q", "stopping 5 processes")
	}
	for _, port := range []int{httpPort, raftPort, bmcPort, bmcPort + 24, metricsPort, metricsPort + 1, artifactPort} {
		if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
			c.Close()
			t.Errorf("port %d still answers after the demo ended: a process was left behind", port)
		}
	}
}
