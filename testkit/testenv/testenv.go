// Package testenv holds helpers the project's tests share: the rule for real
// peers (fail in CI, skip loudly elsewhere), the project's binaries for
// process-level tests, free loopback ports, and waiting with a deadline.
package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// InCI reports whether the tests run under CI (CI=true).
func InCI() bool { return os.Getenv("CI") == "true" }

// RequirePeer fails the test in CI and skips it loudly elsewhere when a real
// peer (a program or package the test drives) is missing. ok says whether it
// is present; what names it and how to get it.
//
// Under -short it skips first: a test that needs a real peer is a
// multi-process test.
func RequirePeer(t testing.TB, ok bool, what string) {
	t.Helper()
	SkipShort(t)
	if ok {
		return
	}
	msg := fmt.Sprintf("REAL PEER MISSING: %s (install with: sudo deploy/peers/install.sh)", what)
	if InCI() {
		t.Fatal(msg)
	}
	fmt.Fprintln(os.Stderr, "SKIP "+t.Name()+": "+msg)
	t.Skip(msg)
}

// SkipShort skips a test that starts real processes (or runs for seconds)
// under go test -short, which runs the fast in-process layer alone.
func SkipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: multi-process or slow test")
	}
}

// RequirePython fails in CI / skips loudly elsewhere unless Debian's
// /usr/bin/python3 can import module (a pyenv python3 earlier on PATH does
// not see Debian's packages); pkg names the package that provides it.
func RequirePython(t testing.TB, module, pkg string) {
	t.Helper()
	ok := exec.Command("/usr/bin/python3", "-c", "import "+module).Run() == nil
	RequirePeer(t, ok, pkg+" ("+module+") importable by /usr/bin/python3")
}

// LookPath returns the path of a program, failing in CI / skipping loudly
// elsewhere when it is missing.
func LookPath(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	RequirePeer(t, err == nil, name+" on PATH")
	return p
}

var (
	buildMu  sync.Mutex
	buildDir string
	built    = map[string]string{}
)

// RepoRoot is the module root (the directory holding go.mod).
func RepoRoot(t testing.TB) string {
	t.Helper()
	return Root()
}

// Root is RepoRoot for callers without a testing.TB (a TestMain).
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Binary returns the path of one of the project's binaries
// (rackfence-coordinator, rackfence-agent, rackfencectl, rackfence-bmcsim).
// It uses $RACKFENCE_BIN/NAME when set (make test builds them first),
// otherwise builds it once per test process with -race when the test
// binary itself is race-enabled.
//
// Under -short it skips the test: a test that needs a binary starts it.
func Binary(t testing.TB, name string) string {
	t.Helper()
	SkipShort(t)
	if d := os.Getenv("RACKFENCE_BIN"); d != "" {
		p := filepath.Join(d, name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := built[name]; ok {
		return p
	}
	if buildDir == "" {
		d, err := os.MkdirTemp("", "rackfence-bin-")
		if err != nil {
			t.Fatal(err)
		}
		buildDir = d
	}
	root := RepoRoot(t)
	matches, _ := filepath.Glob(filepath.Join(root, "*", "cmd", name))
	if len(matches) != 1 {
		t.Fatalf("binary %s: no */cmd/%s in %s", name, name, root)
	}
	out := filepath.Join(buildDir, name)
	args := []string{"build", "-o", out}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "./"+strings.TrimPrefix(matches[0], root+"/"))
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", name, err, b)
	}
	built[name] = out
	return out
}

var (
	portMu sync.Mutex
	// Below the kernel's ephemeral range (32768–60999), where outgoing
	// connections of busy tests would otherwise collide with our listeners.
	nextPort = 10000 + (os.Getpid()*37)%20000
)

// FreePort returns a TCP port free on host (e.g. "127.0.0.1", "127.0.0.2")
// at the time of the call. Ports are handed out in increasing order per
// process so parallel tests do not collide.
func FreePort(t testing.TB, host string) int {
	t.Helper()
	p, err := NextFreePort(host)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// NextFreePort is FreePort for callers without a testing.TB (a TestMain).
func NextFreePort(host string) (int, error) {
	portMu.Lock()
	defer portMu.Unlock()
	for i := 0; i < 2000; i++ {
		p := nextPort
		nextPort++
		if nextPort > 32000 {
			nextPort = 10000
		}
		l, err := net.Listen("tcp", net.JoinHostPort(host, fmt.Sprint(p)))
		if err != nil {
			continue
		}
		l.Close()
		return p, nil
	}
	return 0, fmt.Errorf("no free port on %s", host)
}

// FreePorts returns n consecutive free TCP ports on host.
func FreePorts(t testing.TB, host string, n int) int {
	t.Helper()
	for try := 0; try < 200; try++ {
		base := FreePort(t, host)
		ok := true
		for i := 1; i < n && ok; i++ {
			l, err := net.Listen("tcp", net.JoinHostPort(host, fmt.Sprint(base+i)))
			if err != nil {
				ok = false
				continue
			}
			l.Close()
		}
		if ok {
			portMu.Lock()
			if nextPort < base+n {
				nextPort = base + n
			}
			portMu.Unlock()
			return base
		}
	}
	t.Fatal("no free port range")
	return 0
}

// Eventually polls cond every interval until it returns nil or timeout
// passes, then fails with the last error. Give it a generous timeout: tests
// run under -race on 2 cores.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for {
		if err = cond(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			msg := fmt.Sprintf("timed out after %s waiting for %s: %v", timeout, what, err)
			failures.Store(t, msg)
			t.Fatal(msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
