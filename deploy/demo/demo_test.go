// Package demo holds make demo's script and inventory; this test runs the
// script non-interactively, as CI would.
package demo

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

var binaries = []string{"rackfence-coordinator", "rackfence-agent", "rackfence-bmcsim", "rackfencectl"}

// TestDemo runs deploy/demo/run.sh as CI would (not on a terminal), checks
// that every host of hosts.yaml reaches its resting state (provisioned,
// available, externally-provisioned, unmanaged), presses Ctrl-C (SIGINT to
// the process group) and checks that every process it started is gone;
// then a second run, right away, ends by itself after DEMO_DURATION.
func TestDemo(t *testing.T) {
	testenv.LookPath(t, "bash")
	bin := t.TempDir()
	for _, b := range binaries {
		if err := os.Symlink(testenv.Binary(t, b), filepath.Join(bin, b)); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "demo")
	httpPort := testenv.FreePort(t, "127.0.0.1")
	raftPort := testenv.FreePort(t, "127.0.0.1")
	bmcPort := freeRange(t, 25)
	metricsPort := testenv.FreePorts(t, "127.0.0.1", 2)
	artifactPort := testenv.FreePort(t, "127.0.0.1")
	env := func(duration int) []string {
		return []string{
			"RACKFENCE_BIN=" + bin, "DEMO_DIR=" + dir, fmt.Sprintf("DEMO_DURATION=%d", duration),
			fmt.Sprintf("DEMO_HTTP_PORT=%d", httpPort), fmt.Sprintf("DEMO_RAFT_PORT=%d", raftPort),
			fmt.Sprintf("DEMO_BMC_PORT=%d", bmcPort), fmt.Sprintf("DEMO_METRICS_PORT=%d", metricsPort),
			fmt.Sprintf("DEMO_ARTIFACT_PORT=%d", artifactPort),
		}
	}
	script := filepath.Join(testenv.RepoRoot(t), "deploy", "demo", "run.sh")

	p := testenv.Start(t, "demo", script, env(600))
	url := fmt.Sprintf("https://127.0.0.1:%d", httpPort)
	want := map[string]string{"r2-h12": wire.StateExternallyProvisioned, "r2-h13": wire.StateUnmanaged}
	for _, n := range []string{"r1-h01", "r1-h02", "r1-h03", "r1-h04", "r1-web"} {
		want[n] = wire.StateProvisioned
	}
	testenv.Eventually(t, 3*time.Minute, "every demo host at rest", func() error {
		if p.Exited() {
			t.Fatalf("the demo exited early:\n%s", p.Output())
		}
		tok, err := client.ReadTokenFile(filepath.Join(dir, "data", "admin.token"))
		if err != nil {
			return err
		}
		cl, err := client.New(client.Config{Coordinator: url, Token: tok, RetryFor: -1})
		if err != nil {
			return err
		}
		l, err := cl.ListHosts(context.Background(), client.HostFilter{})
		if err != nil {
			return err
		}
		if len(l.Items) != 26 {
			return fmt.Errorf("%d hosts, want 26", len(l.Items))
		}
		for _, h := range l.Items {
			st := ""
			if h.Status != nil {
				st = h.Status.ProvisioningState
			}
			w, ok := want[h.Name]
			if !ok {
				w = wire.StateAvailable
			}
			if st != w {
				return fmt.Errorf("%s is %q, want %q", h.Name, st, w)
			}
		}
		// The demo hosts carry labels: role=compute are the 4 provisioned.
		sel, err := cl.ListHosts(context.Background(), client.HostFilter{Selector: "role=compute,zone=a"})
		if err != nil {
			return err
		}
		for _, h := range sel.Items {
			if want[h.Name] != wire.StateProvisioned {
				t.Fatalf("-l role=compute,zone=a selected %s", h.Name)
			}
		}
		if len(sel.Items) != 4 {
			t.Fatalf("-l role=compute,zone=a selected %d hosts, want the 4 provisioned", len(sel.Items))
		}
		return nil
	})
	checkConfigDrive(t, bmcPort+24)
	// Ctrl-C: the terminal sends SIGINT to the whole foreground group.
	if err := syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err, exited := p.Wait(2 * time.Minute)
	if !exited {
		t.Fatalf("the demo did not stop on Ctrl-C:\n%s", p.Output())
	}
	if code := p.Cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit code after Ctrl-C: %d (%v), want 130", code, err)
	}
	out := p.Output()
	for _, w := range []string{"rackfencectl detach r1-h01", "RACKFENCE_TOKEN_FILE", "hosts (printed when they change", "stopping 5 processes"} {
		if !strings.Contains(out, w) {
			t.Errorf("demo output lacks %q", w)
		}
	}
	for _, port := range []int{httpPort, raftPort, bmcPort, bmcPort + 23, bmcPort + 24, metricsPort, metricsPort + 1, artifactPort} {
		if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
			c.Close()
			t.Errorf("port %d still answers after the demo ended: a process was left behind", port)
		}
	}

	// A second run needs no cleanup.
	p2 := testenv.Start(t, "demo-again", script, env(3))
	// (ends by itself after DEMO_DURATION=3)
	err, exited = p2.Wait(3 * time.Minute)
	if !exited || err != nil || !strings.Contains(p2.Output(), "demo done") {
		t.Fatalf("second demo run: exited=%v err=%v\n%s", exited, err, p2.Output())
	}
}

// freeRange finds n consecutive free loopback ports below the ephemeral
// range (32768+ here), where client connections of busy parallel tests
// rarely leave holes; testenv.FreePorts can fail to find 24 in a row there.
func freeRange(t *testing.T, n int) int {
	t.Helper()
	start := 10000 + (os.Getpid()*131)%15000
	for base := start; base < start+15000; base++ {
		b := 10000 + (base-10000)%20000
		ok := true
		var ls []net.Listener
		for i := 0; i < n && ok; i++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", b+i))
			if err != nil {
				ok = false
				base += i // skip past the busy port
				break
			}
			ls = append(ls, l)
		}
		for _, l := range ls {
			l.Close()
		}
		if ok {
			return b
		}
	}
	t.Fatalf("no %d consecutive free ports", n)
	return 0
}
