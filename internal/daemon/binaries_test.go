package daemon_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/internal/daemon"
	"github.com/rackfence/rackfence/testkit/testenv"
)

const versionPkg = "github.com/rackfence/rackfence/internal/version"

// binaries are the */cmd/* directories: every binary make build builds.
func binaries(t *testing.T, root string) []string {
	dirs, err := filepath.Glob(filepath.Join(root, "*", "cmd", "*"))
	if err != nil || len(dirs) < 6 {
		t.Fatalf("*/cmd/* in %s: %v %v", root, dirs, err)
	}
	var names []string
	for _, d := range dirs {
		names = append(names, filepath.Base(d))
	}
	return names
}

// stampedBinaries returns the directory of binaries to test and the version
// and commit they must report. With RACKFENCE_BIN (make build) that is
// make's stamp: git describe and the short commit of the checkout. Without
// it the test builds every binary with its own stamp, the -X paths the
// Makefile uses.
func stampedBinaries(t *testing.T, root string, names []string) (dir, ver, commit string) {
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		b, err := cmd.Output()
		if err != nil {
			t.Skipf("git %v: %v (no checkout: cannot know the stamp)", args, err)
		}
		return strings.TrimSpace(string(b))
	}
	if d := os.Getenv("RACKFENCE_BIN"); d != "" {
		// Whether the tree is dirty may change between make build and the
		// test; the rest of git describe may not.
		return d, strings.TrimSuffix(git("describe", "--tags", "--always", "--dirty"), "-dirty"), git("rev-parse", "--short", "HEAD")
	}
	dir, ver, commit = t.TempDir(), "v0.0.0-stamp-test", "c0ffee1"
	ldflags := "-X " + versionPkg + ".Version=" + ver + " -X " + versionPkg + ".Commit=" + commit
	for _, n := range names {
		matches, _ := filepath.Glob(filepath.Join(root, "*", "cmd", n))
		cmd := exec.Command("go", "build", "-ldflags", ldflags, "-o", filepath.Join(dir, n), "./"+strings.TrimPrefix(matches[0], root+"/"))
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", n, err, b)
		}
	}
	return dir, ver, commit
}

type result struct {
	code           int
	stdout, stderr string
}

func runBin(t *testing.T, bin string, env []string, args ...string) result {
	t.Helper()
	// No timeout of its own: each of these ends at once or is a bug that
	// go test -timeout reports with the stack.
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s %v: %v", filepath.Base(bin), args, err)
	}
	return result{cmd.ProcessState.ExitCode(), out.String(), errb.String()}
}

// TestEveryBinaryAnswersVersion: every binary prints NAME VERSION (COMMIT,
// GO VERSION) with the stamp of its build and exits 0.
func TestEveryBinaryAnswersVersion(t *testing.T) {
	testenv.SkipShort(t)
	root := testenv.RepoRoot(t)
	names := binaries(t, root)
	dir, ver, commit := stampedBinaries(t, root, names)
	for _, n := range names {
		r := runBin(t, filepath.Join(dir, n), nil, "--version")
		// NAME VERSION[-dirty] (COMMIT, goX.Y.Z)
		want := n + " " + ver + " (" + commit + ", go"
		line := strings.Replace(r.stdout, ver+"-dirty (", ver+" (", 1)
		if r.code != daemon.ExitOK || !strings.HasPrefix(line, want) || !strings.HasSuffix(line, ")\n") || strings.Count(line, "\n") != 1 {
			t.Errorf("%s --version: exit %d, stdout %q, stderr %q; want exit 0 and %q…) (binaries older than the checkout's HEAD? run make build)", n, r.code, r.stdout, r.stderr, want)
		}
	}
	ctl := filepath.Join(dir, "rackfencectl")
	r := runBin(t, ctl, nil, "version", "-o", "json")
	var info struct{ Name, Version, Commit, GoVersion string }
	if err := json.Unmarshal([]byte(r.stdout), &info); r.code != daemon.ExitOK || err != nil ||
		info.Name != "rackfencectl" || strings.TrimSuffix(info.Version, "-dirty") != ver || info.Commit != commit || info.GoVersion == "" {
		t.Errorf("rackfencectl version -o json: exit %d, %q (%v)", r.code, r.stdout, err)
	}
}

// TestBadFlagValueIsAUsageError: a flag value out of its allowed set, on
// the command line or in RACKFENCE_<FLAG>, exits 2 (docs/operator.md: usage
// error) with one line naming the flag, before anything starts.
func TestBadFlagValueIsAUsageError(t *testing.T) {
	testenv.SkipShort(t)
	root := testenv.RepoRoot(t)
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		bin  string
		env  []string
		args []string
		flag string
	}{
		{"rackfence-coordinator", nil, []string{"--max-batch", "0"}, "--max-batch"},
		{"rackfence-coordinator", []string{"RACKFENCE_RAFT_LOG_STORE=rocks"}, nil, "--raft-log-store"},
		{"rackfence-coordinator", nil, []string{"--log-format", "xml"}, "--log-format"},
		{"rackfence-agent", nil, []string{"--rack", "r1", "--token-file", tok, "--workers", "0"}, "--workers"},
		{"rackfence-agent", []string{"RACKFENCE_LEASE_TTL=10ms"}, []string{"--rack", "r1", "--token-file", tok}, "--lease-ttl"},
		{"rackfence-bmcsim", nil, []string{"--hosts", "0"}, "--hosts"},
		{"rackfence-bmcsim", nil, []string{"--log-level", "loud"}, "--log-level"},
		{"rackfence-chaos", nil, []string{"--duration", "1s"}, "--duration"},
		{"rackfence-load", nil, []string{"write", "--keys", "0"}, "--keys"},
		{"rackfencectl", nil, []string{"drain", "h1", "--mode", "sideways"}, "--mode"},
	}
	for _, c := range cases {
		r := runBin(t, testenv.Binary(t, c.bin), c.env, c.args...)
		if r.code != daemon.ExitUsage || !strings.Contains(r.stderr, c.flag) {
			t.Errorf("%s %v %v: exit %d, stderr %q; want exit 2 and a message naming %s", c.bin, c.env, c.args, r.code, r.stderr, c.flag)
		}
	}
	for _, n := range binaries(t, root) {
		args := []string{"--sideways"}
		if n == "rackfencectl" {
			args = []string{"host", "list", "--sideways"} // flags belong to a command
		}
		r := runBin(t, testenv.Binary(t, n), nil, args...)
		if r.code != daemon.ExitUsage || !strings.Contains(r.stderr, "--sideways") {
			t.Errorf("%s --sideways: exit %d, stderr %q; want exit 2 naming the flag", n, r.code, r.stderr)
		}
	}
}
