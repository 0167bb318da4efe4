// Package examples holds example configuration; the tests check it against
// the real binaries.
package examples

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// readEnv parses an environment file (KEY=VALUE lines, # comments).
func readEnv(t *testing.T, name string) map[string]string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		l := strings.TrimSpace(s.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			t.Fatalf("%s: %q is not KEY=VALUE", name, l)
		}
		env[k] = v
	}
	return env
}

var flagRE = regexp.MustCompile(`--([a-z][a-z0-9-]*)`)

// flagsOf lists the flags a binary's --help shows.
func flagsOf(t *testing.T, bin string) map[string]bool {
	t.Helper()
	out, _ := exec.Command(bin, "--help").CombinedOutput()
	fl := map[string]bool{}
	for _, m := range flagRE.FindAllStringSubmatch(string(out), -1) {
		fl[m[1]] = true
	}
	if len(fl) < 5 {
		t.Fatalf("%s --help shows no flags:\n%s", bin, out)
	}
	return fl
}

// TestEnvFilesNameRealFlags checks that every RACKFENCE_ variable of the
// example files is a flag of the binary that reads it (RACKFENCE_TOKEN is
// the join token of the coordinator).
func TestEnvFilesNameRealFlags(t *testing.T) {
	bins := map[string]map[string]bool{
		"coordinator": flagsOf(t, testenv.Binary(t, "rackfence-coordinator")),
		"agent":       flagsOf(t, testenv.Binary(t, "rackfence-agent")),
	}
	files, _ := filepath.Glob("*.env")
	if len(files) < 5 {
		t.Fatalf("only %d env files", len(files))
	}
	for _, f := range files {
		which := "agent"
		if strings.HasPrefix(f, "coordinator") {
			which = "coordinator"
		}
		for k := range readEnv(t, f) {
			if k == "RACKFENCE_TOKEN" && which == "coordinator" {
				continue
			}
			flag := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(k, "RACKFENCE_")), "_", "-")
			if !strings.HasPrefix(k, "RACKFENCE_") || !bins[which][flag] {
				t.Errorf("%s: %s is not a flag of rackfence-%s (--%s)", f, k, which, flag)
			}
		}
	}
	conf, err := os.ReadFile("ironic-token.conf")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(conf), "RACKFENCE_IRONIC_TOKEN_FILE") || !bins["agent"]["ironic-token-file"] {
		t.Error("ironic-token.conf does not set an agent flag")
	}
}

// TestThreeNodeBootstrap follows README.md steps 2 and 3 with the example
// files, addresses moved to loopback ports: coord-1 bootstraps, coord-2 and
// coord-3 join with the admin token, and all three are voters.
func TestThreeNodeBootstrap(t *testing.T) {
	bin := testenv.Binary(t, "rackfence-coordinator")
	ctl := testenv.Binary(t, "rackfencectl")
	var urls []string
	addr := map[string]string{}
	for i := 1; i <= 3; i++ {
		ip := fmt.Sprintf("10.0.0.1%d", i)
		hp, rp := testenv.FreePort(t, "127.0.0.1"), testenv.FreePort(t, "127.0.0.1")
		addr[ip+":7480"] = fmt.Sprintf("127.0.0.1:%d", hp)
		addr[ip+":7481"] = fmt.Sprintf("127.0.0.1:%d", rp)
		urls = append(urls, "https://"+addr[ip+":7480"])
	}
	localize := func(v string) string {
		for from, to := range addr {
			v = strings.ReplaceAll(v, from, to)
		}
		return v
	}
	var token string
	var dirs []string
	for i := 1; i <= 3; i++ {
		env := readEnv(t, fmt.Sprintf("coordinator-%d.env", i))
		var kv []string
		for k, v := range env {
			if k == "RACKFENCE_TOKEN" {
				v = token
			}
			kv = append(kv, k+"="+localize(v))
		}
		dir := t.TempDir()
		dirs = append(dirs, dir) // nothing copied: the join hands over the secrets key file
		testenv.Start(t, fmt.Sprintf("coord-%d", i), bin, kv, "--data-dir", dir)
		if i == 1 {
			testenv.Eventually(t, time.Minute, "coord-1's admin token", func() error {
				var err error
				token, err = client.ReadTokenFile(filepath.Join(dir, "admin.token"))
				return err
			})
		}
	}
	cl, err := client.New(client.Config{Coordinator: strings.Join(urls, ","), Token: token})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 2*time.Minute, "three voters", func() error {
		l, err := cl.Members(context.Background())
		if err != nil {
			return err
		}
		voters := 0
		for _, m := range l.Items {
			if m.Suffrage == "Voter" {
				voters++
			}
		}
		if voters != 3 {
			return fmt.Errorf("%d voters: %+v", voters, l.Items)
		}
		return nil
	})
	// rackfencectl through a follower's URL works as the README shows.
	for _, u := range urls {
		cmd := exec.Command(ctl, "cluster", "members", "--coordinator", u)
		cmd.Env = []string{"RACKFENCE_TOKEN=" + token}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "coord-3") || !strings.Contains(string(out), "Voter") {
			t.Errorf("cluster members via %s: %v\n%s", u, err, out)
		}
		// Every member holds the secrets key (the README's check): the
		// joiners received coord-1's file with their certificates.
		cmd = exec.Command(ctl, "secrets", "status", "--stale", "-o", "json", "--coordinator", u)
		cmd.Env = []string{"RACKFENCE_TOKEN=" + token}
		out, err = cmd.Output()
		var st wire.SecretsStatus
		if err != nil || json.Unmarshal(out, &st) != nil || st.Primary == "" || len(st.Keys) != 1 || !st.Keys[0].Loaded {
			t.Errorf("secrets status --stale via %s: %v\n%s", u, err, out)
		}
	}
	want, err := os.ReadFile(filepath.Join(dirs[0], "secrets.key"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs[1:] {
		if got, err := os.ReadFile(filepath.Join(d, "secrets.key")); err != nil || string(got) != string(want) {
			t.Errorf("%s/secrets.key is not coord-1's key file (%v)", d, err)
		}
	}
	cmd := exec.Command(ctl, "token", "create", "--role", "agent", "--rack", "r1", "--coordinator", urls[2])
	cmd.Env = []string{"RACKFENCE_TOKEN=" + token}
	if out, err := cmd.CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) < 16 {
		t.Errorf("token create via a follower: %v\n%s", err, out)
	}
}
