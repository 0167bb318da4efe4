package debian

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rackfence/rackfence/testkit/testenv"
)

var packages = []string{"rackfence-coordinator", "rackfence-agent", "rackfencectl"}

// testVersion is what the test stamps into the binaries; --version from
// /usr/bin must print it.
const testVersion = "9.9.9-pkgtest"

// TestInstallRemove builds the packages with deploy/dist.sh (what make
// dist runs), installs them with dpkg -i on this machine, checks what
// they installed (versions, owners, modes, the system user, conffiles),
// systemd-analyze verifies the installed units, reinstalls them over an
// edited config and some data (both kept), then removes and purges them
// and checks everything is gone. Needs root, dpkg and dpkg-deb (CI
// has them); skips loudly if this machine already has rackfence installed
// by anything else, so it never touches an installation it did not make.
func TestInstallRemove(t *testing.T) {
	testenv.RequirePeer(t, os.Geteuid() == 0, "root (dpkg -i installs system-wide)")
	dpkgDeb := testenv.LookPath(t, "dpkg-deb")
	testenv.LookPath(t, "dpkg")
	testenv.LookPath(t, "dpkg-query")
	refuseIfPresent(t)

	_, userErr := user.Lookup("rackfence")
	userExisted := userErr == nil
	t.Cleanup(func() { purgeAll(t, userExisted) })

	out := t.TempDir()
	build := exec.Command(filepath.Join(testenv.RepoRoot(t), "deploy", "dist.sh"))
	build.Env = append(os.Environ(), "OUT="+out, "VERSION="+testVersion, "COMMIT=pkgtest")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("deploy/dist.sh: %v\n%s", err, b)
	}
	var debs []string
	for _, p := range packages {
		m, _ := filepath.Glob(filepath.Join(out, p+"_9.9.9+pkgtest_*.deb"))
		if len(m) != 1 {
			t.Fatalf("dist.sh made %v for %s, want one %s_9.9.9+pkgtest_ARCH.deb", m, p, p)
		}
		if b, err := exec.Command(dpkgDeb, "--info", m[0]).CombinedOutput(); err != nil {
			t.Fatalf("dpkg-deb --info %s: %v\n%s", m[0], err, b)
		}
		debs = append(debs, m[0])
	}

	run(t, "dpkg", append([]string{"-i"}, debs...)...)
	for _, p := range packages {
		if s := status(p); s != "install ok installed" {
			t.Fatalf("%s after dpkg -i: status %q", p, s)
		}
	}
	for _, b := range packages {
		path := "/usr/bin/" + b
		v := run(t, path, "--version")
		if !strings.Contains(v, testVersion) {
			t.Errorf("%s --version = %q, want it to name %s", path, strings.TrimSpace(v), testVersion)
		}
		checkMode(t, path, 0o755, "root")
	}

	if _, err := user.Lookup("rackfence"); err != nil {
		t.Fatalf("no rackfence user after install: %v", err)
	}
	pw := run(t, "getent", "passwd", "rackfence")
	if f := strings.Split(strings.TrimSpace(pw), ":"); len(f) != 7 || !strings.HasSuffix(f[6], "nologin") || f[5] != "/var/lib/rackfence" {
		t.Errorf("rackfence user: %q, want home /var/lib/rackfence and a nologin shell", pw)
	}
	checkMode(t, "/var/lib/rackfence", os.ModeDir|0o700, "rackfence")
	checkMode(t, "/etc/rackfence/coordinator.env", 0o600, "root")
	checkMode(t, "/etc/rackfence/agent.env", 0o644, "root")
	checkMode(t, "/lib/systemd/system/rackfence-coordinator.service", 0o644, "root")
	checkMode(t, "/lib/systemd/system/rackfence-agent@.service", 0o644, "root")
	for p, want := range map[string]string{"rackfence-coordinator": "/etc/rackfence/coordinator.env", "rackfence-agent": "/etc/rackfence/agent.env"} {
		if c := run(t, "dpkg-query", "-W", "-f=${Conffiles}", p); !strings.Contains(c, want) {
			t.Errorf("%s conffiles %q lack %s", p, c, want)
		}
	}
	for _, unit := range []string{"rackfence-coordinator.service", "rackfence-agent@.service"} {
		b, err := os.ReadFile("/lib/systemd/system/" + unit)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{"User=rackfence\n", "ExecStart=/usr/bin/rackfence-"} {
			if !strings.Contains(string(b), w) {
				t.Errorf("installed %s lacks %q", unit, strings.TrimSpace(w))
			}
		}
		if strings.Contains(string(b), "DynamicUser=") || strings.Contains(string(b), "/usr/local/") {
			t.Errorf("installed %s still says DynamicUser= or /usr/local/", unit)
		}
	}
	verifyUnits(t)

	// Reinstall over it (dpkg's upgrade path: prerm upgrade, postinst
	// configure with the old version): the operator's config edit and the
	// member's data survive.
	const edit = "RACKFENCE_NODE_ID=pkgtest\n"
	f, err := os.OpenFile("/etc/rackfence/coordinator.env", os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(edit); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.WriteFile("/var/lib/rackfence/raft.db", []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	run(t, "dpkg", append([]string{"-i"}, debs...)...)
	if b, err := os.ReadFile("/etc/rackfence/coordinator.env"); err != nil || !strings.HasSuffix(string(b), edit) {
		t.Errorf("reinstall lost the edit of coordinator.env (a conffile): %v\n%s", err, b)
	}
	if b, err := os.ReadFile("/var/lib/rackfence/raft.db"); err != nil || string(b) != "data" {
		t.Errorf("reinstall lost /var/lib/rackfence/raft.db: %v %q", err, b)
	}
	checkMode(t, "/var/lib/rackfence", os.ModeDir|0o700, "rackfence")

	// remove: binaries and units go; the member's data and the config stay.
	run(t, "dpkg", append([]string{"-r"}, packages...)...)
	for _, p := range []string{"/usr/bin/rackfence-coordinator", "/usr/bin/rackfence-agent", "/usr/bin/rackfencectl",
		"/lib/systemd/system/rackfence-coordinator.service", "/lib/systemd/system/rackfence-agent@.service"} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s still there after dpkg -r", p)
		}
	}
	for _, p := range []string{"/var/lib/rackfence", "/etc/rackfence/coordinator.env"} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("dpkg -r removed %s (remove keeps data and config; purge deletes them): %v", p, err)
		}
	}
	// purge: config and data go too.
	run(t, "dpkg", append([]string{"--purge"}, packages...)...)
	for _, p := range []string{"/var/lib/rackfence", "/etc/rackfence"} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s still there after dpkg --purge", p)
		}
	}
	for _, p := range packages {
		if s := status(p); s != "" {
			t.Errorf("%s after dpkg --purge: status %q, want not installed", p, s)
		}
	}
}

// verifyUnits runs systemd-analyze verify on the installed units. It works
// without a running systemd (it loads the files and checks settings and
// ExecStart binaries); the template is checked as an instance.
func verifyUnits(t *testing.T) {
	t.Helper()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		testenv.RequirePeer(t, false, "systemd-analyze (apt install systemd) to verify the installed units")
		return
	}
	inst := filepath.Join(t.TempDir(), "rackfence-agent@r1.service")
	b, err := os.ReadFile("/lib/systemd/system/rackfence-agent@.service")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"/lib/systemd/system/rackfence-coordinator.service", inst} {
		out, err := exec.Command(analyze, "verify", u).CombinedOutput()
		if err != nil {
			t.Errorf("systemd-analyze verify %s: %v\n%s", u, err, out)
			continue
		}
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, "rackfence") {
				t.Errorf("systemd-analyze verify %s warns: %s", u, l)
			}
		}
	}
}

// refuseIfPresent skips (loudly) when anything this test would install or
// purge is already on the machine: a rackfence package, the binaries, the
// config or the data directory. The test must never purge a real member.
func refuseIfPresent(t *testing.T) {
	t.Helper()
	var found []string
	for _, p := range packages {
		if s := status(p); s != "" {
			found = append(found, fmt.Sprintf("package %s (%s)", p, s))
		}
	}
	for _, p := range []string{"/usr/bin/rackfence-coordinator", "/usr/bin/rackfence-agent", "/usr/bin/rackfencectl",
		"/etc/rackfence", "/var/lib/rackfence", "/lib/systemd/system/rackfence-coordinator.service"} {
		if _, err := os.Lstat(p); err == nil {
			found = append(found, p)
		}
	}
	if len(found) > 0 {
		msg := "rackfence is already installed here and this test did not install it; not touching it: " + strings.Join(found, ", ")
		fmt.Fprintln(os.Stderr, "SKIP "+t.Name()+": "+msg)
		t.Skip(msg)
	}
}

// purgeAll undoes whatever the test installed, even when it failed half
// way: purge the packages, and remove the user if the test created it.
func purgeAll(t *testing.T, userExisted bool) {
	var installed []string
	for _, p := range packages {
		if status(p) != "" {
			installed = append(installed, p)
		}
	}
	if len(installed) > 0 {
		if b, err := exec.Command("dpkg", append([]string{"--purge"}, installed...)...).CombinedOutput(); err != nil {
			t.Errorf("cleanup: dpkg --purge %v: %v\n%s", installed, err, b)
		}
	}
	// Neither existed before the test (refuseIfPresent): a broken postrm
	// must not leave them behind for the next run.
	for _, d := range []string{"/etc/rackfence", "/var/lib/rackfence"} {
		if err := os.RemoveAll(d); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}
	if !userExisted {
		if _, err := user.Lookup("rackfence"); err == nil {
			if b, err := exec.Command("userdel", "rackfence").CombinedOutput(); err != nil {
				t.Errorf("cleanup: userdel rackfence: %v\n%s", err, b)
			}
		}
		if _, err := user.LookupGroup("rackfence"); err == nil {
			_ = exec.Command("groupdel", "rackfence").Run()
		}
	}
}

// status is dpkg's status of package p, "" when dpkg knows it not or it
// is purged.
func status(p string) string {
	b, err := exec.Command("dpkg-query", "-W", "-f=${Status}", p).Output()
	if err != nil {
		return ""
	}
	s := strings.TrimSpace(string(b))
	if s == "unknown ok not-installed" || strings.HasSuffix(s, " not-installed") {
		return ""
	}
	return s
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	b, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, b)
	}
	return string(b)
}

// checkMode checks path's type and permission bits and its owner's name.
func checkMode(t *testing.T, path string, want os.FileMode, owner string) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	if got := st.Mode() & (os.ModeType | os.ModePerm); got != want {
		t.Errorf("%s has mode %v, want %v", path, got, want)
	}
	uid := st.Sys().(*syscall.Stat_t).Uid
	u, err := user.LookupId(fmt.Sprint(uid))
	if err != nil || u.Username != owner {
		t.Errorf("%s is owned by uid %d, want %s", path, uid, owner)
	}
}
