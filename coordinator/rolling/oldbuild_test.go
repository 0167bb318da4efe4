package rolling

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/testkit/testenv"
)

// oldCommit is the last released main before the version gate.
const oldCommit = "162e986"

// oldBinaries builds rackfence-coordinator and rackfence-agent at
// oldCommit into a directory kept across runs (keyed by the commit) and
// returns it. It skips when the history cannot give the commit.
func oldBinaries(t *testing.T) string {
	t.Helper()
	root := testenv.RepoRoot(t)
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", append([]string{"-C", root}, args...)...)
		b, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(b)), err
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skipf("SKIP rolling upgrade: git is not installed, so commit %s cannot be built", oldCommit)
	}
	if out, err := git("rev-parse", "--is-shallow-repository"); err != nil || out == "true" {
		t.Skipf("SKIP rolling upgrade: the checkout is shallow or not a git repository (%s %v): fetch the history (git fetch --unshallow) to test the upgrade from %s", out, err, oldCommit)
	}
	full, err := git("rev-parse", "--verify", "--quiet", oldCommit+"^{commit}")
	if err != nil {
		t.Skipf("SKIP rolling upgrade: commit %s is not in this repository's history: fetch it to test the upgrade", oldCommit)
	}
	dir := filepath.Join(os.TempDir(), "rackfence-release-"+full[:12])
	names := []string{"rackfence-coordinator", "rackfence-agent"}
	if haveAll(dir, names) {
		return dir
	}
	src, err := os.MkdirTemp("", "rackfence-src-"+oldCommit+"-")
	if err != nil {
		t.Fatal(err)
	}
	src = filepath.Join(src, "tree")
	if out, err := git("worktree", "add", "--detach", src, full); err != nil {
		buildFailed(t, "git worktree add %s: %v\n%s", oldCommit, err, out)
	}
	defer func() {
		if out, err := git("worktree", "remove", "--force", src); err != nil {
			t.Logf("git worktree remove %s: %v %s", src, err, out)
		}
		os.RemoveAll(filepath.Dir(src))
	}()
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	for _, n := range names {
		pkg := "./coordinator/cmd/" + n
		if n == "rackfence-agent" {
			pkg = "./agent/cmd/" + n
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(tmp, n),
			"-ldflags", "-X github.com/rackfence/rackfence/internal/version.Version="+oldCommit+" -X github.com/rackfence/rackfence/internal/version.Commit="+oldCommit, pkg)
		cmd.Dir = src
		if b, err := cmd.CombinedOutput(); err != nil {
			buildFailed(t, "go build %s at %s: %v\n%s", n, oldCommit, err, b)
		}
	}
	if err := os.Rename(tmp, dir); err != nil && !haveAll(dir, names) {
		t.Fatal(err)
	}
	return dir
}

// buildFailed fails under CI (the history is there: the old release must
// build) and skips loudly elsewhere (e.g. no module cache offline).
func buildFailed(t *testing.T, format string, a ...any) {
	t.Helper()
	if testenv.InCI() {
		t.Fatalf(format, a...)
	}
	t.Skipf("SKIP rolling upgrade (would FAIL under CI=true): "+format, a...)
}

func haveAll(dir string, names []string) bool {
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			return false
		}
	}
	return true
}
