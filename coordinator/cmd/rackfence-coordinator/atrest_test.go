package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

func randomHex(t *testing.T, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

var simListening = regexp.MustCompile(`listening on 127\.0\.0\.1:(\d+)-`)

// TestNoPasswordAtRest: no BMC password is kept in the clear, on real processes:
// a coordinator stores two BMC credentials with distinctive passwords, an
// agent uses them against a rackfence-bmcsim that accepts one of them (the
// other takes the auth-failure path), the coordinator takes a snapshot,
// gets more writes, restarts and reveals them again. Then every byte of
// every file under the data dir (gzip'd snapshots inflated), the agent's
// BMC audit file beside it, and the coordinator's and the agent's logs
// are scanned for the passwords, raw, base64 and hex: none may be found.
// A plaintext canary (the username, which is not sealed) must be found in
// raft.db and in the snapshot, so the scan demonstrably reaches both. Every file must be 0600, every directory
// 0700, right after the snapshot and after a restart over loosened modes.
func TestNoPasswordAtRest(t *testing.T) {
	dir := t.TempDir()
	goodPW := "rf-atrest-good-" + randomHex(t, 8)
	wrongPW := "rf-atrest-wrong-" + randomHex(t, 8)
	canary := "rf-atrest-user-" + randomHex(t, 4)
	// A data record (user data, the ramdisk's network data) is sealed the
	// same way: its values are scanned for like the passwords.
	dataPW := "rf-atrest-data-" + randomHex(t, 8)
	dataRec := map[string]string{"userData": "#cloud-config\n# " + dataPW + "\n",
		"networkData": `{"links":[],"networks":[],"services":[],"x-note":"` + dataPW + `"}`}

	simProc := testenv.Start(t, "bmcsim", testenv.Binary(t, "rackfence-bmcsim"), nil,
		"--hosts", "2", "--base-port", "0", "--username", canary, "--password", goodPW)
	sim := &rig.Sim{T: t, N: 2, Proc: simProc}
	testenv.Eventually(t, 60*time.Second, "bmcsim serving", func() error {
		if simProc.Exited() {
			t.Fatalf("bmcsim exited:\n%s", simProc.Output())
		}
		m := simListening.FindStringSubmatch(simProc.Output())
		if m == nil {
			return fmt.Errorf("no listening line yet")
		}
		sim.Base, _ = strconv.Atoi(m[1])
		return nil
	})

	c := rig.StartCoordinator(t, dir, rig.CoordOpts{})
	data := filepath.Join(dir, "data")
	ctx := rig.Ctx(t)
	if err := c.Admin.SetCredentials(ctx, "good", wire.Credentials{Username: canary, Password: goodPW}); err != nil {
		t.Fatal(err)
	}
	if err := c.Admin.SetCredentials(ctx, "wrong", wire.Credentials{Username: canary, Password: wrongPW}); err != nil {
		t.Fatal(err)
	}
	if err := c.Admin.SetCredentials(ctx, "atrest-data", wire.Credentials{Data: dataRec}); err != nil {
		t.Fatal(err)
	}
	h0, h1 := sim.Host("atrest-0", "r1", 0), sim.Host("atrest-1", "r1", 1)
	h0.BMC.Credentials, h1.BMC.Credentials = "good", "wrong"
	// The agent reveals the ramdisk's network data to register the host.
	h0.UserData = &wire.SecretReference{Name: "atrest-data"}
	h0.PreprovisioningNetworkData = &wire.SecretReference{Name: "atrest-data"}
	c.Apply(h0)
	c.Apply(h1)
	agent := c.StartAgent("r1", "a1")
	c.WaitHost("atrest-0", 90*time.Second, "available with the sealed password", rig.StateIs(wire.StateAvailable, ""))
	c.WaitHost("atrest-1", 90*time.Second, "refused by the BMC", func(h *wire.Host) error {
		if h.Status == nil || h.Status.ErrorType == "" {
			return fmt.Errorf("no error yet")
		}
		return nil
	})

	// A GET, a list and the host show the record's keys, never a value.
	if cr, err := c.Admin.GetCredentials(ctx, "atrest-data"); err != nil || len(cr.DataKeys) != 2 || cr.Data != nil {
		t.Fatalf("GET credentials: %+v %v", cr, err)
	}
	reads := map[string]func() (any, error){
		"GET /v1/credentials/atrest-data": func() (any, error) { return c.Admin.GetCredentials(ctx, "atrest-data") },
		"GET /v1/credentials":             func() (any, error) { return c.Admin.ListCredentials(ctx) },
		"GET /v1/hosts/atrest-0":          func() (any, error) { return c.Admin.GetHost(ctx, "atrest-0") },
		"GET /v1/audit":                   func() (any, error) { return c.Admin.Audit(ctx, 0) },
	}
	for what, read := range reads {
		v, err := read()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if b, _ := json.Marshal(v); strings.Contains(string(b), dataPW) {
			t.Errorf("%s shows a data value", what)
		}
	}

	snap, err := c.Admin.Snapshot(ctx)
	if err != nil || snap.Index == 0 {
		t.Fatalf("snapshot: %+v %v", snap, err)
	}
	// The snapshot raft just wrote (raft creates 0644 files in 0755
	// directories) and everything else, while the process runs.
	checkModes(t, data, "after a snapshot, before any restart")
	// Writes after the snapshot land in raft.db only.
	if err := c.Admin.SetCredentials(ctx, "after-snapshot", wire.Credentials{Username: canary, Password: goodPW}); err != nil {
		t.Fatal(err)
	}
	agent.Stop(10 * time.Second)
	firstRun := c.Proc.Output()
	c.Proc.Stop(20 * time.Second)

	// Loosen modes as an older version (or an operator) might have left
	// them; the restart must tighten them again.
	loose := filepath.Join(data, "loose-dir")
	if err := os.Mkdir(loose, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(loose, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(data, "node-id"), 0o644); err != nil {
		t.Fatal(err)
	}

	c.Start()
	agentTok, err := client.ReadTokenFile(c.Token(wire.RoleAgent, "r1", "agent-check.token"))
	if err != nil {
		t.Fatal(err)
	}
	ac, _, err := testenv.AgentClient(ctx, client.Config{Coordinator: c.URL, Token: agentTok}, "agent-check")
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 60*time.Second, "reveal after restart", func() error {
		cr, err := ac.RevealCredentials(ctx, "good")
		if err != nil {
			return err
		}
		if cr.Password != goodPW {
			return fmt.Errorf("revealed a different password")
		}
		if d, err := ac.RevealCredentials(ctx, "atrest-data"); err != nil || d.Data["userData"] != dataRec["userData"] {
			return fmt.Errorf("data not revealed after restart: %v", err)
		}
		return nil
	})
	secondRun := c.Proc.Output()
	c.Proc.Stop(20 * time.Second)

	snaps, _ := filepath.Glob(filepath.Join(data, "snapshots", "*", "state.bin"))
	if len(snaps) == 0 {
		t.Fatal("no snapshot on disk: the scan would not cover one")
	}
	// Canary: the scan reaches the Raft log (raft-wal's segment files by
	// default, raft.db with --raft-log-store bolt) and inflates the snapshot.
	canaryHits, _, err := testenv.FindSecret(data, []byte(canary))
	if err != nil {
		t.Fatal(err)
	}
	var inDB, inSnap bool
	for _, h := range canaryHits {
		inDB = inDB || strings.HasSuffix(h.File, "raft.db") || strings.Contains(h.File, string(filepath.Separator)+"wal"+string(filepath.Separator))
		inSnap = inSnap || strings.Contains(h.File, "state.bin (gzip")
	}
	if !inDB || !inSnap {
		t.Fatalf("the plaintext canary was not found in the Raft log (%v) and in the inflated snapshot (%v): the scan proves nothing; hits %v", inDB, inSnap, canaryHits)
	}

	found := 0
	var scanned int64
	files := 0
	// The whole test directory: the data dir, and beside it the agent's
	// BMC audit file (guard-a1.jsonl) and the tokens.
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files++
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(dir, "guard-a1.jsonl")); err != nil {
		t.Fatalf("the agent's audit file is not where the scan looks: %v", err)
	}
	for _, pw := range []string{goodPW, wrongPW, dataPW} {
		hits, n, err := testenv.FindSecret(dir, []byte(pw))
		if err != nil {
			t.Fatal(err)
		}
		scanned += n
		for _, h := range hits {
			t.Errorf("password found at rest: %s", h)
		}
		found += len(hits)
		logs := map[string]string{"coordinator log (first run)": firstRun, "coordinator log (after restart)": secondRun, "agent log": agent.Output()}
		for name, text := range logs {
			for _, h := range testenv.FindSecretIn(name, []byte(text), []byte(pw)) {
				t.Errorf("password found in a log: %s", h)
				found++
			}
			scanned += int64(len(text))
		}
	}
	t.Logf("password bytes found: %d (2 passwords and a data value × %d forms; %d files (data dir, agent audit file, tokens), %d snapshot(s), 3 process logs; %d bytes scanned incl. inflated gzip)",
		found, len(testenv.SecretForms([]byte(goodPW))), files, len(snaps), scanned)

	// After the restart over loosened modes, everything is owner-only again.
	checkModes(t, data, "after restart")
}

// checkModes fails the test for any file under dir that is not 0600 or
// directory that is not 0700.
func checkModes(t *testing.T, dir, when string) {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Error(err)
			return nil
		}
		info, _ := d.Info()
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if info.Mode().Perm() != want {
			t.Errorf("%s: %s is %04o, want %04o", when, p, info.Mode().Perm(), want)
		}
		n++
		return nil
	})
	t.Logf("%s: %d files and directories under the data dir checked for 0600/0700", when, n)
}
