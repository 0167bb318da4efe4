package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/procstat"
)

// TestFleetNiceStartsProcessesNiced: with FleetNice a process the fleet
// starts runs at that nice value from its start (every thread), under the
// pid the fleet waits on; without it, at this process's own.
func TestFleetNiceStartsProcessesNiced(t *testing.T) {
	sleep, err := findSleep()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	own := niceOf(t, os.Getpid())
	for _, n := range []int{0, 7} {
		f := &fleet{cfg: FleetConfig{FleetNice: n}}
		bin, args := f.niceArgs(sleep, []string{"30"})
		p, err := startProc(dir, fmt.Sprintf("sleep%d", n), bin, args...)
		if err != nil {
			t.Fatal(err)
		}
		want := own + n
		deadline := time.Now().Add(30 * time.Second)
		got := niceOf(t, p.pid())
		for got != want && time.Now().Before(deadline) { // until nice has exec'd sleep
			time.Sleep(10 * time.Millisecond)
			got = niceOf(t, p.pid())
		}
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p.pid()))
		_ = p.cmd.Process.Kill()
		<-p.done
		if got != want || strings.TrimSpace(string(comm)) != "sleep" {
			t.Errorf("FleetNice %d: pid %d runs %q at nice %d, want sleep at %d", n, p.pid(), strings.TrimSpace(string(comm)), got, want)
		}
	}
	for _, bad := range []int{-1, 20} {
		if err := CheckFleetNice(bad); err == nil || !strings.Contains(err.Error(), "--fleet-nice") {
			t.Errorf("FleetNice %d: %v, want an error naming --fleet-nice", bad, err)
		}
	}
}

// TestLeaseLossesCountsAgentLogLines: the count reads the line the agent
// logs on each loss (agent/agent.go), and only that line.
func TestLeaseLossesCountsAgentLogLines(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "agent", "agent.go"))
	if err != nil {
		t.Fatal(err)
	}
	msg := strings.TrimPrefix(string(leaseLossLine), `"msg":"`)
	if !strings.Contains(string(src), `a.log.Warn("`+msg) {
		t.Fatalf("agent/agent.go no longer logs %q on a lease loss: update leaseLossLine", msg)
	}
	dir := t.TempDir()
	var f fleet
	for i, lines := range []string{
		`{"level":"WARN","msg":"lost the rack lease; dropped all host state, standing by","rack":"r000","epoch":18}` + "\n" +
			`{"level":"WARN","msg":"status write refused: this agent's epoch is stale; dropping all host state"}` + "\n" +
			`{"level":"WARN","msg":"lost the rack lease; dropped all host state, standing by","rack":"r000","epoch":19}` + "\n",
		`{"level":"INFO","msg":"holding the rack lease","reason":"lost the rack lease"}` + "\n",
	} {
		p := filepath.Join(dir, fmt.Sprintf("agent-%d.log", i))
		if err := os.WriteFile(p, []byte(lines), 0o600); err != nil {
			t.Fatal(err)
		}
		f.agents = append(f.agents, &proc{log: p})
	}
	if n := f.leaseLosses(); n != 2 {
		t.Errorf("lease losses = %d, want 2", n)
	}
}

func findSleep() (string, error) {
	for _, p := range []string{"/bin/sleep", "/usr/bin/sleep"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no sleep binary")
}

// niceOf is the nice value of pid.
func niceOf(t *testing.T, pid int) int {
	t.Helper()
	n, ok := procstat.Nice(pid)
	if !ok {
		t.Fatalf("no nice value for pid %d", pid)
	}
	return n
}
