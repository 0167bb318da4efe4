package main

import (
	"fmt"
	"github.com/rackfence/rackfence/testkit/procstat"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rackfence/rackfence/internal/daemon"
	"github.com/rackfence/rackfence/testkit/bmcsim"
	"github.com/rackfence/rackfence/testkit/testenv"
)

func TestBinaryServesAndStopsOnSIGTERM(t *testing.T) {
	bin := testenv.Binary(t, "rackfence-bmcsim")
	base := testenv.FreePorts(t, "127.0.0.1", 3)
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	p := testenv.Start(t, "bmcsim", bin, []string{"RACKFENCE_LATENCY=10ms"},
		"--hosts", "3", "--base-port", strconv.Itoa(base), "--audit", audit)
	testenv.Eventually(t, 60*time.Second, "the listening line", func() error {
		if !strings.Contains(p.Output(), fmt.Sprintf("listening on 127.0.0.1:%d-%d", base, base+2)) {
			return fmt.Errorf("output so far: %q", p.Output())
		}
		return nil
	})
	r, err := http.NewRequest("POST", fmt.Sprintf("http://127.0.0.1:%d/redfish/v1/Systems/1/Actions/ComputerSystem.Reset", base+2), strings.NewReader(`{"ResetType":"On"}`))
	if err != nil {
		t.Fatal(err)
	}
	r.SetBasicAuth("admin", "password")
	r.Header.Set("User-Agent", "rackfence-agent/x (a; rack=r; epoch=9)")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 {
		t.Fatalf("reset: %d", resp.StatusCode)
	}
	b, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"userAgent":"rackfence-agent/x (a; rack=r; epoch=9)"`) || !strings.Contains(string(b), fmt.Sprintf(`"port":%d`, base+2)) {
		t.Fatalf("audit: %s", b)
	}
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err, done := p.Wait(30 * time.Second)
	if !done || err != nil {
		t.Fatalf("after SIGTERM: exited %v, err %v", done, err)
	}
}

// --profile serves the named shape (RACKFENCE_PROFILE too); --list-profiles
// prints every profile with its source and exits 0.
func TestProfileFlags(t *testing.T) {
	bin := testenv.Binary(t, "rackfence-bmcsim")
	out, err := exec.Command(bin, "--list-profiles").CombinedOutput()
	if err != nil {
		t.Fatalf("--list-profiles: %v\n%s", err, out)
	}
	for _, p := range bmcsim.Profiles() {
		if !strings.Contains(string(out), p+" ") || bmcsim.ProfileSource(p) == "" || !strings.Contains(string(out), bmcsim.ProfileSource(p)) {
			t.Errorf("--list-profiles lacks %s:\n%s", p, out)
		}
	}
	help, _ := exec.Command(bin, "--help").CombinedOutput()
	if !strings.Contains(string(help), "system-vmedia-patch") {
		t.Errorf("--help does not list the profiles:\n%s", help)
	}
	base := testenv.FreePorts(t, "127.0.0.1", 1)
	p := testenv.Start(t, "bmcsim", bin, []string{"RACKFENCE_PROFILE=idrac"}, "--hosts", "1", "--base-port", strconv.Itoa(base))
	testenv.Eventually(t, 60*time.Second, "the listening line", func() error {
		if !strings.Contains(p.Output(), "/redfish/v1/Systems/System.Embedded.1") {
			return fmt.Errorf("output so far: %q", p.Output())
		}
		return nil
	})
}

func TestBadFlagsExit2(t *testing.T) {
	if code := daemon.Main(name, &Config{}, serve, []string{"--hosts", "many"}); code != 2 {
		t.Fatalf("bad --hosts: exit %d; want 2", code)
	}
	if code := daemon.Main(name, &Config{}, serve, []string{"--profile", "hal9000"}); code != 2 {
		t.Fatalf("unknown --profile: exit %d; want 2", code)
	}
	t.Setenv("RACKFENCE_LATENCY", "slow")
	if code := daemon.Main(name, &Config{}, serve, []string{"--hosts", "1"}); code != 2 {
		t.Fatalf("bad RACKFENCE_LATENCY: exit %d; want 2", code)
	}
}

// TestRSSWith1000BMCs starts the simulator with 1,000 BMCs (a build without
// -race, as the demo and benchmarks run it), logs in to every BMC and reads
// its systems, then reads VmRSS from /proc: it must stay under 200 MiB.
// Run with the default profile and with blade (four systems per BMC).
// Reproduce the figure: go test -run RSS -v ./testkit/cmd/rackfence-bmcsim/
func TestRSSWith1000BMCs(t *testing.T) {
	testenv.SkipShort(t)
	// make test builds bin/ without -race; otherwise build it here.
	bin := filepath.Join(os.Getenv("RACKFENCE_BIN"), "rackfence-bmcsim")
	if _, err := os.Stat(bin); os.Getenv("RACKFENCE_BIN") == "" || err != nil {
		bin = filepath.Join(t.TempDir(), "rackfence-bmcsim")
		build := exec.Command("go", "build", "-o", bin, ".")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	for _, c := range []struct {
		profile, figure string
		systems         []string
	}{
		{"default", "bmcsim_rss_1000_bmcs_mib", []string{"/Systems/1"}},
		{"blade", "bmcsim_rss_1000_blade_bmcs_mib", []string{"/Systems/Blade1", "/Systems/Blade2", "/Systems/Blade3", "/Systems/Blade4"}},
	} {
		t.Run(c.profile, func(t *testing.T) { rss1000(t, bin, c.profile, c.figure, c.systems) })
	}
}

func rss1000(t *testing.T, bin, profile, figure string, systems []string) {
	const n = 1000
	// --base-port 0: the simulator finds a free range of 1,000 itself.
	p := testenv.Start(t, "bmcsim", bin, nil, "--hosts", strconv.Itoa(n), "--base-port", "0", "--profile", profile)
	var base int
	testenv.Eventually(t, 60*time.Second, "the listening line", func() error {
		_, rest, ok := strings.Cut(p.Output(), "listening on 127.0.0.1:")
		if !ok {
			return fmt.Errorf("output so far: %q", p.Output())
		}
		first, _, _ := strings.Cut(rest, "-")
		var err error
		base, err = strconv.Atoi(first)
		return err
	})
	idle := rssMiB(t, p.Cmd.Process.Pid)

	// Touch every BMC: a session login and its systems read, 32 at a time.
	client := &http.Client{Timeout: 60 * time.Second}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 32)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(port int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			u := fmt.Sprintf("http://127.0.0.1:%d/redfish/v1", port)
			resp, err := client.Post(u+"/SessionService/Sessions", "application/json", strings.NewReader(`{"UserName":"admin","Password":"password"}`))
			if err != nil {
				errs <- err
				return
			}
			resp.Body.Close()
			for _, sys := range systems {
				req, _ := http.NewRequest("GET", u+sys, nil)
				req.Header.Set("X-Auth-Token", resp.Header.Get("X-Auth-Token"))
				r, err := client.Do(req)
				if err != nil {
					errs <- err
					return
				}
				r.Body.Close()
				if r.StatusCode != 200 {
					errs <- fmt.Errorf("port %d %s: %d", port, sys, r.StatusCode)
				}
			}
		}(base + i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	busy := rssMiB(t, p.Cmd.Process.Pid)
	t.Logf("bmcsim RSS with %d BMCs (profile %s): %.1f MiB idle, %.1f MiB after a login and a read of every system on every BMC", n, profile, idle, busy)
	fmt.Printf("FIGURE %s idle=%.1f busy=%.1f\n", figure, idle, busy)
	if busy >= 200 {
		t.Fatalf("RSS %.1f MiB with %d BMCs; the limit is 200 MiB", busy, n)
	}
}

func rssMiB(t *testing.T, pid int) float64 {
	t.Helper()
	mib := procstat.RSSMiB(pid)
	if mib < 0 {
		t.Fatalf("no VmRSS in /proc/%d/status", pid)
	}
	return mib
}
