package systemd

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestSyscallFilter runs the coordinator and a rack agent (direct
// provisioner, against rackfence-bmcsim) under strace through start-up,
// real work and SIGTERM, and checks that every system call they made is
// allowed by the units' SystemCallFilter (@system-service minus @privileged
// and @resources, as systemd-analyze expands them). A call outside it would
// kill the daemon with SIGSYS under systemd, which nothing else here can
// show: there is no systemd to run the units under.
func TestSyscallFilter(t *testing.T) {
	strace := testenv.LookPath(t, "strace")
	analyze := testenv.LookPath(t, "systemd-analyze")
	if out, err := exec.Command(strace, "-qq", "-o", "/dev/null", "true").CombinedOutput(); err != nil {
		testenv.RequirePeer(t, false, fmt.Sprintf("strace able to trace here (ptrace allowed): %v %s", err, out))
	}
	allowed := map[string]bool{}
	for s := range expand(t, analyze, "@system-service", map[string]bool{}) {
		allowed[s] = true
	}
	for _, deny := range []string{"@privileged", "@resources"} {
		for s := range expand(t, analyze, deny, map[string]bool{}) {
			delete(allowed, s)
		}
	}
	if len(allowed) < 100 {
		t.Fatalf("only %d allowed system calls; systemd-analyze output changed?", len(allowed))
	}

	bins := productionBinaries(t)
	dir := t.TempDir()

	hp, rp := testenv.FreePort(t, "127.0.0.1"), testenv.FreePort(t, "127.0.0.1")
	url := fmt.Sprintf("https://127.0.0.1:%d", hp)
	coordTrace := filepath.Join(dir, "coordinator.trace")
	coord := testenv.Start(t, "coordinator", strace, nil, "-f", "-qq", "-o", coordTrace, bins["rackfence-coordinator"],
		"--data-dir", filepath.Join(dir, "data"), "--http-addr", fmt.Sprintf("127.0.0.1:%d", hp), "--raft-addr", fmt.Sprintf("127.0.0.1:%d", rp))
	var admin *client.Client
	testenv.Eventually(t, 2*time.Minute, "the coordinator", func() error {
		tok, err := client.ReadTokenFile(filepath.Join(dir, "data", "admin.token"))
		if err != nil {
			return err
		}
		c, err := client.New(client.Config{Coordinator: url, Token: tok, RetryFor: -1})
		if err != nil {
			return err
		}
		if _, err := c.Racks(context.Background()); err != nil {
			return err
		}
		admin = c
		return nil
	})

	bmcPort := testenv.FreePorts(t, "127.0.0.1", 2)
	testenv.Start(t, "bmcsim", bins["rackfence-bmcsim"], nil, "--hosts", "2", "--base-port", strconv.Itoa(bmcPort))
	ctx := context.Background()
	if err := admin.SetCredentials(ctx, "bmc", wire.Credentials{Username: "admin", Password: "password"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		h := &wire.Host{Name: fmt.Sprintf("r1-h%02d", i), Rack: "r1", Online: true,
			BMC:            wire.BMC{Address: fmt.Sprintf("redfish+http://127.0.0.1:%d/redfish/v1/Systems/1", bmcPort+i), Credentials: "bmc"},
			BootMACAddress: fmt.Sprintf("52:54:00:00:00:%02x", i)}
		if _, _, err := admin.ApplyHost(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	tok, err := admin.CreateToken(ctx, wire.TokenRequest{Role: wire.RoleAgent, Rack: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	tokFile := filepath.Join(dir, "agent.token")
	if err := os.WriteFile(tokFile, []byte(tok.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	agentTrace := filepath.Join(dir, "agent.trace")
	agent := testenv.Start(t, "agent", strace, nil, "-f", "-qq", "-o", agentTrace, bins["rackfence-agent"],
		"--coordinator", url, "--token-file", tokFile, "--rack", "r1", "--agent-id", "traced",
		"--metrics-addr", fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, "127.0.0.1")),
		// The artifact server and its image cache (the directory's flock).
		"--artifact-addr", fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, "127.0.0.1")),
		"--image-cache-dir", filepath.Join(dir, "imagecache"))
	testenv.Eventually(t, 3*time.Minute, "both hosts available", func() error {
		l, err := admin.ListHosts(ctx, client.HostFilter{Rack: "r1"})
		if err != nil {
			return err
		}
		for _, h := range l.Items {
			if h.Status == nil || h.Status.ProvisioningState != wire.StateAvailable {
				return fmt.Errorf("%s not available yet", h.Name)
			}
		}
		return nil
	})
	if _, err := admin.Detach(ctx, "r1-h00", wire.IntentRequest{}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 2*time.Minute, "the detach acknowledged", func() error {
		h, err := admin.GetHost(ctx, "r1-h00")
		if err != nil {
			return err
		}
		if h.Intents == nil || h.Intents.Detach == nil || !h.Intents.Detach.Acknowledged {
			return fmt.Errorf("not yet")
		}
		return nil
	})

	// SIGTERM the daemons themselves (strace's child), so the shutdown path
	// is traced too, then let strace exit.
	for _, p := range []*testenv.Process{agent, coord} {
		child := tracee(t, p.Cmd.Process.Pid)
		if err := syscall.Kill(child, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if _, exited := p.Wait(time.Minute); !exited {
			t.Fatalf("%s did not stop on SIGTERM", p.Name)
		}
	}

	for name, trace := range map[string]string{"rackfence-coordinator": coordTrace, "rackfence-agent": agentTrace} {
		used := tracedCalls(t, trace)
		if len(used) < 20 {
			t.Fatalf("%s: only %d system calls traced; is the trace complete?", name, len(used))
		}
		var bad []string
		for s := range used {
			if !allowed[s] {
				bad = append(bad, s)
			}
		}
		sort.Strings(bad)
		if len(bad) > 0 {
			t.Errorf("%s makes system calls the units' SystemCallFilter denies (it would die of SIGSYS): %s", name, strings.Join(bad, " "))
		}
		t.Logf("%s: %d distinct system calls, all allowed", name, len(used))
	}
}

// expand lists the system calls of a systemd-analyze syscall-filter group,
// following nested groups.
func expand(t *testing.T, analyze, group string, seen map[string]bool) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	if seen[group] {
		return out
	}
	seen[group] = true
	b, err := exec.Command(analyze, "syscall-filter", group).Output()
	if err != nil {
		t.Fatalf("systemd-analyze syscall-filter %s: %v", group, err)
	}
	lines := strings.Split(string(b), "\n")
	for _, l := range lines[1:] { // the first line names the group
		l = strings.TrimSpace(l)
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
		case strings.HasPrefix(l, "@"):
			for s := range expand(t, analyze, l, seen) {
				out[s] = true
			}
		default:
			out[l] = true
		}
	}
	return out
}

var callRE = regexp.MustCompile(`^\d+\s+([a-z_0-9]+)\(`)

// tracedCalls reads the distinct system call names of an strace -f file.
func tracedCalls(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	used := map[string]bool{}
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		if m := callRE.FindStringSubmatch(s.Text()); m != nil {
			used[m[1]] = true
		}
	}
	return used
}

// tracee returns the pid of strace's traced child.
func tracee(t *testing.T, stracePid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", stracePid, stracePid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		t.Fatalf("strace %d has no child", stracePid)
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// productionBinaries returns the daemons as deployed: make's binaries
// ($RACKFENCE_BIN) or a plain go build (a -race build makes system calls
// production binaries do not).
func productionBinaries(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	root := testenv.RepoRoot(t)
	dir := t.TempDir()
	for name, pkg := range map[string]string{
		"rackfence-coordinator": "./coordinator/cmd/rackfence-coordinator",
		"rackfence-agent":       "./agent/cmd/rackfence-agent",
		"rackfence-bmcsim":      "./testkit/cmd/rackfence-bmcsim",
	} {
		if d := os.Getenv("RACKFENCE_BIN"); d != "" {
			if _, err := os.Stat(filepath.Join(d, name)); err == nil {
				out[name] = filepath.Join(d, name)
				continue
			}
		}
		p := filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-o", p, pkg)
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", name, err, b)
		}
		out[name] = p
	}
	return out
}
