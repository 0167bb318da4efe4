// Package systemd holds rackfence's unit files; this test checks them with
// the real systemd-analyze.
package systemd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/testkit/testenv"
)

var units = []string{"rackfence-coordinator.service", "rackfence-agent@.service"}

// TestVerify runs "systemd-analyze verify --root=DIR" on the units. verify
// needs every ExecStart binary to exist and the distribution's units
// (sysinit.target and friends) under the root, so DIR gets stub binaries at
// /usr/local/bin and a copy of /usr/lib/systemd/system. Warnings about our
// units (a misspelt setting is only a warning) fail the test too.
func TestVerify(t *testing.T) {
	analyze := testenv.LookPath(t, "systemd-analyze")
	sysUnits := ""
	for _, d := range []string{"/usr/lib/systemd/system", "/lib/systemd/system"} {
		if _, err := os.Stat(filepath.Join(d, "sysinit.target")); err == nil {
			sysUnits = d
			break
		}
	}
	testenv.RequirePeer(t, sysUnits != "", "systemd's unit directory (/usr/lib/systemd/system with sysinit.target; apt install systemd)")

	root := t.TempDir()
	mustCopyDir(t, sysUnits, filepath.Join(root, "usr/lib/systemd/system"))
	bin := filepath.Join(root, "usr/local/bin")
	etc := filepath.Join(root, "etc/systemd/system")
	for _, d := range []string{bin, etc} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range []string{"rackfence-coordinator", "rackfence-agent"} {
		if err := os.WriteFile(filepath.Join(bin, b), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// ExecReload's kill (SIGHUP re-reads the secrets key file).
	if err := os.MkdirAll(filepath.Join(root, "usr/bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "usr/bin/kill"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, u := range units {
		data, err := os.ReadFile(u)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(etc, u), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(analyze, "verify", "--root="+root, "rackfence-coordinator.service", "rackfence-agent@r1.service")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "rackfence") {
			t.Errorf("systemd-analyze warns: %s", l)
		}
	}
}

// TestVerifyCatchesMistakes makes sure the check above can fail: a unit
// pointing at a missing binary must be refused.
func TestVerifyCatchesMistakes(t *testing.T) {
	analyze := testenv.LookPath(t, "systemd-analyze")
	dir := t.TempDir()
	data, err := os.ReadFile("rackfence-coordinator.service")
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(data), "/usr/local/bin/rackfence-coordinator", "/nonexistent/rackfence-coordinator", 1)
	p := filepath.Join(dir, "rackfence-coordinator.service")
	if err := os.WriteFile(p, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", p).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not executable") {
		t.Fatalf("verify accepted a missing binary: %v\n%s", err, out)
	}
}

// TestHardening checks the settings the deployment relies on are present.
func TestHardening(t *testing.T) {
	want := []string{
		"Type=notify", "Restart=on-failure", "DynamicUser=yes", "StateDirectory=",
		"ProtectSystem=strict", "ProtectHome=yes", "NoNewPrivileges=yes",
		"CapabilityBoundingSet=\n", "PrivateTmp=yes", "EnvironmentFile=", "/etc/rackfence/",
		"ExecStart=/usr/local/bin/",
	}
	for _, u := range units {
		data, err := os.ReadFile(u)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(data), w) {
				t.Errorf("%s lacks %q", u, strings.TrimSpace(w))
			}
		}
	}
}

func mustCopyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case info.IsDir():
			return os.MkdirAll(target, 0o755)
		case info.Mode()&os.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, target)
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, 0o644)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

// TestStopTimeoutBelowUnit: the coordinator's own stop bound
// (--stop-timeout's default) ends the process before the unit's
// TimeoutStopSec makes systemd send SIGKILL, with room for the exit.
func TestStopTimeoutBelowUnit(t *testing.T) {
	data, err := os.ReadFile("rackfence-coordinator.service")
	if err != nil {
		t.Fatal(err)
	}
	var unit time.Duration
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "TimeoutStopSec="); ok {
			if unit, err = time.ParseDuration(v); err != nil {
				t.Fatalf("TimeoutStopSec=%s: %v (write it as Go reads durations, e.g. 30s)", v, err)
			}
		}
	}
	if unit == 0 {
		t.Fatal("rackfence-coordinator.service sets no TimeoutStopSec")
	}
	const room = 5 * time.Second // logging the stuck stop, the exit itself
	if coordinator.DefaultStopTimeout+room > unit {
		t.Errorf("--stop-timeout's default %s + %s is not below the unit's TimeoutStopSec=%s: systemd would SIGKILL a member still stopping",
			coordinator.DefaultStopTimeout, room, unit)
	}
	if strings.Contains(string(data), "STOP_TIMEOUT") {
		t.Error("the unit sets RACKFENCE_STOP_TIMEOUT: keep it in the env file, below TimeoutStopSec")
	}
}
