package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/internal/pki"
	"github.com/rackfence/rackfence/shared/backupfile"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestRestoreFencesOldAgent runs it all with real processes: a backup of
// cluster A (rackfencectl cluster snapshot save); A moves on and a real
// agent takes rack r1 under an epoch E above anything in the backup; the
// backup is restored (rackfence-coordinator restore) into a new cluster B;
// A dies and the agent, still holding E, fails over to B: B refuses E, the
// agent stops touching its BMCs under E, and takes the rack again on B
// under an epoch above E.
func TestRestoreFencesOldAgent(t *testing.T) {
	bin := testenv.Binary(t, "rackfence-coordinator")
	ctl := testenv.Binary(t, "rackfencectl")
	dir := t.TempDir()
	a := rig.StartCoordinator(t, filepath.Join(dir, "a"), rig.CoordOpts{Insecure: true})
	sim := rig.StartSim(t, dir, 2, 0)
	a.Apply(sim.Host("r1-h0", "r1", 0))
	// The agent's token exists before the backup, so B knows it too.
	agentToken := a.Token(wire.RoleAgent, "r1", "agent.token")
	adminTokenFile := filepath.Join(dir, "a", "data", coordinator.AdminTokenFile)

	backup := filepath.Join(dir, "cluster.backup")
	if out, err := exec.Command(ctl, "--coordinator", a.URL, "--token-file", adminTokenFile, "cluster", "snapshot", "save", backup).CombinedOutput(); err != nil {
		t.Fatalf("snapshot save: %v\n%s", err, out)
	}
	out, err := exec.Command(ctl, "cluster", "snapshot", "status", backup, "-o", "json").CombinedOutput()
	if err != nil {
		t.Fatalf("snapshot status: %v\n%s", err, out)
	}
	var st struct {
		Header     backupfile.Header `json:"header"`
		ChecksumOK bool              `json:"checksumOK"`
	}
	if err := json.Unmarshal(out, &st); err != nil || !st.ChecksumOK || st.Header.Hosts != 1 || st.Header.Tier != "default" {
		t.Fatalf("snapshot status: %v %s", err, out)
	}

	// A moves on, well past the backup's index.
	for i := range 100 {
		a.Apply(&wire.Host{Name: fmt.Sprintf("r9-h%03d", i), Rack: "r9", Online: true, BMC: wire.BMC{Address: sim.Address(1), Credentials: "bmc"}})
	}
	bHTTP, bRaft := testenv.FreePort(t, "127.0.0.1"), testenv.FreePort(t, "127.0.0.1")
	bURL := fmt.Sprintf("http://127.0.0.1:%d", bHTTP)
	agent := rig.StartAgent(t, rig.AgentOpts{Coordinator: a.URL + "," + bURL, TokenFile: agentToken, Rack: "r1", ID: "old",
		LogLevel: "debug", AuditFile: filepath.Join(dir, "guard.jsonl")})
	var held *wire.Lease
	testenv.Eventually(t, 60*time.Second, "the agent holding r1 on A", func() error {
		held, err = a.Admin.GetLease(rig.Ctx(t), "r1")
		if err != nil {
			return err
		}
		if held == nil || held.Epoch == 0 {
			return fmt.Errorf("no lease")
		}
		return nil
	})
	if held.Epoch <= st.Header.Index+100 {
		t.Fatalf("A's epoch %d is not above the backup's index %d", held.Epoch, st.Header.Index)
	}
	a.WaitHost("r1-h0", 60*time.Second, "reconciled by the agent", func(h *wire.Host) error {
		if h.Status == nil {
			return fmt.Errorf("no status")
		}
		return nil
	})

	bDir := filepath.Join(dir, "b")
	out, err = exec.Command(bin, "restore", "--snapshot", backup, "--data-dir", bDir, "--node-id", "b-1",
		"--raft-addr", fmt.Sprintf("127.0.0.1:%d", bRaft), "--secrets-key-file", filepath.Join(dir, "a", "data", "secrets.key")).CombinedOutput()
	if err != nil {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "restore generation 1") {
		t.Errorf("restore output does not name the generation:\n%s", out)
	}
	if out, err := exec.Command(bin, "restore", "--snapshot", backup, "--data-dir", bDir, "--node-id", "b-1").CombinedOutput(); err == nil || !strings.Contains(string(out), "not empty") {
		t.Errorf("a second restore into the same dir: %v\n%s", err, out)
	}
	b := testenv.Start(t, "coordinator b", bin, nil, "--data-dir", bDir, "--http-addr", fmt.Sprintf("127.0.0.1:%d", bHTTP),
		"--raft-addr", fmt.Sprintf("127.0.0.1:%d", bRaft), "--insecure-plaintext", "--raft-log-level", "error")
	tok, err := client.ReadTokenFile(adminTokenFile)
	if err != nil {
		t.Fatal(err)
	}
	adminB, err := client.New(client.Config{Coordinator: bURL, Token: tok, RetryFor: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 60*time.Second, "B serving the restored hosts", func() error {
		if b.Exited() {
			t.Fatalf("B exited:\n%s", b.Output())
		}
		_, err := adminB.GetHost(rig.Ctx(t), "r1-h0")
		return err
	})

	// A dies; the agent, still holding E, fails over to B and is refused.
	a.Proc.Kill()
	refusal := regexp.MustCompile(fmt.Sprintf(`renewal of epoch %d refused`, held.Epoch))
	testenv.Eventually(t, 60*time.Second, "B refusing the old agent's epoch", func() error {
		if !refusal.MatchString(agent.Output()) {
			return fmt.Errorf("no refusal of epoch %d in the agent's log yet", held.Epoch)
		}
		return nil
	})
	refusedAt := logTime(t, agent.Output(), refusal)
	var again *wire.Lease
	testenv.Eventually(t, 60*time.Second, "the rack taken again on B", func() error {
		again, err = adminB.GetLease(rig.Ctx(t), "r1")
		if err != nil {
			return err
		}
		if again == nil {
			return fmt.Errorf("no lease on B yet")
		}
		return nil
	})
	if again.Epoch <= held.Epoch || again.Epoch>>fsm.GenerationShift != 1 {
		t.Fatalf("B granted epoch %d, A had granted %d: want above it, generation 1", again.Epoch, held.Epoch)
	}
	t.Logf("A's epoch %d refused by B at %s; B granted %d", held.Epoch, refusedAt.Format(time.RFC3339Nano), again.Epoch)
	if st, err := adminB.Status(rig.Ctx(t)); err != nil || st.RestoreGeneration != 1 {
		t.Errorf("B's status: restore generation %d (%v), want 1", st.RestoreGeneration, err)
	}
	// No BMC call under the old epoch after B refused it.
	old := fmt.Sprintf("epoch=%d)", held.Epoch)
	underOld := 0
	for _, l := range sim.AuditLines(-1) {
		at, _ := time.Parse(time.RFC3339Nano, l.Time)
		if !strings.HasSuffix(l.UserAgent, old) {
			continue
		}
		underOld++
		if at.After(refusedAt) {
			t.Errorf("BMC call under the refused epoch at %s: %s %s", l.Time, l.Method, l.Path)
		}
	}
	if underOld == 0 {
		t.Errorf("no BMC call under epoch %d at all: the agent never acted, so the check above proves nothing", held.Epoch)
	}
}

// logTime is the time of the first JSON log line matching re.
func logTime(t *testing.T, out string, re *regexp.Regexp) time.Time {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !re.MatchString(line) {
			continue
		}
		if i := strings.IndexByte(line, '{'); i >= 0 {
			line = line[i:]
		}
		var rec struct {
			Time time.Time `json:"time"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err == nil && !rec.Time.IsZero() {
			return rec.Time
		}
		t.Fatalf("log line without a time: %s", line)
	}
	t.Fatalf("no log line matches %s", re)
	return time.Time{}
}

// TestRestoreTLS: a backup of a TLS cluster restored and started with no
// TLS flags: the first start creates a new CA and member certificate
// (the data dir holds Raft state, yet it is a new cluster), the old admin
// token works with the new CA file, and a restart reuses the TLS files.
// A new member then joins it. (With --ca-cert/--ca-key of the old cluster
// the old token works as it is: the existing start-up path, unchanged.)
func TestRestoreTLS(t *testing.T) {
	bin := testenv.Binary(t, "rackfence-coordinator")
	dir := t.TempDir()
	a := rig.StartCoordinator(t, filepath.Join(dir, "a"), rig.CoordOpts{})
	a.Apply(&wire.Host{Name: "h1", Rack: "r1", Online: true, BMC: wire.BMC{Address: "redfish+http://127.0.0.1:1/redfish/v1/Systems/1", Credentials: "bmc"}})
	aData := filepath.Join(dir, "a", "data")
	backup := filepath.Join(dir, "a.backup")
	f, err := os.Create(backup)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Admin.Backup(rig.Ctx(t), f, nil); err != nil {
		t.Fatal(err)
	}
	f.Close()
	a.Proc.Stop(30 * time.Second)

	bDir := filepath.Join(dir, "b")
	raft := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, "127.0.0.1"))
	if out, err := exec.Command(bin, "restore", "--snapshot", backup, "--data-dir", bDir, "--node-id", "b-1",
		"--raft-addr", raft, "--secrets-key-file", filepath.Join(aData, "secrets.key"), "-o", "json").CombinedOutput(); err != nil {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	httpAddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, "127.0.0.1"))
	// Started with another Raft address than restore was given: refused.
	if out, err := exec.Command(bin, "--data-dir", bDir, "--http-addr", httpAddr, "--raft-addr", "127.0.0.1:1").CombinedOutput(); err == nil ||
		!strings.Contains(string(out), "start with --raft-addr "+raft) {
		t.Fatalf("start with another --raft-addr: %v\n%s", err, out)
	}
	b := testenv.Start(t, "coordinator b", bin, nil, "--data-dir", bDir, "--http-addr", httpAddr, "--raft-addr", raft, "--raft-log-level", "error")
	tok, err := client.ReadTokenFile(filepath.Join(aData, coordinator.AdminTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	var adminB *client.Client
	testenv.Eventually(t, 60*time.Second, "B serving the restored host over TLS with a new CA", func() error {
		if b.Exited() {
			t.Fatalf("B exited:\n%s", b.Output())
		}
		cl, err := client.New(client.Config{Coordinator: "https://" + httpAddr, Token: tok, RetryFor: 5 * time.Second,
			CAFile: filepath.Join(bDir, "tls", "ca.crt")})
		if err != nil {
			return err
		}
		if _, err := cl.GetHost(rig.Ctx(t), "h1"); err != nil {
			return err
		}
		adminB = cl
		return nil
	})
	// Restarted, B is an ordinary member: its TLS files are in place.
	b.Stop(30 * time.Second)
	b = testenv.Start(t, "coordinator b restarted", bin, nil, "--data-dir", bDir, "--http-addr", httpAddr, "--raft-addr", raft, "--raft-log-level", "error")
	testenv.Eventually(t, 60*time.Second, "B restarted", func() error {
		if b.Exited() {
			t.Fatalf("B exited after a restart:\n%s", b.Output())
		}
		_, err := adminB.GetHost(rig.Ctx(t), "h1")
		return err
	})
	// A new member joins the restored cluster as usual, pinning its new CA.
	joiner := newMember(t, t.TempDir(), 2)
	newCA, err := pki.LoadCA(filepath.Join(bDir, "tls", "ca.crt"), "")
	if err != nil {
		t.Fatal(err)
	}
	joiner.args = append(joiner.args, "--join", "https://"+httpAddr, "--ca-fingerprint", newCA.Fingerprint())
	j := testenv.Start(t, "joiner", bin, []string{"RACKFENCE_TOKEN=" + tok}, joiner.args...)
	testenv.Eventually(t, 90*time.Second, "two voters in the restored cluster", func() error {
		if j.Exited() {
			t.Fatalf("the joiner exited:\n%s", j.Output())
		}
		st, err := adminB.Status(rig.Ctx(t))
		if err != nil {
			return err
		}
		if len(st.Members) != 2 || st.RestoreGeneration != 1 {
			return fmt.Errorf("members %+v, generation %d", st.Members, st.RestoreGeneration)
		}
		return nil
	})
	if _, _, err := adminB.ApplyHost(rig.Ctx(t), &wire.Host{Name: "h2", Rack: "r1", Online: true,
		BMC: wire.BMC{Address: "redfish+http://127.0.0.1:1/redfish/v1/Systems/1", Credentials: "bmc"}}); err != nil {
		t.Fatalf("a write on the two-member restored cluster: %v", err)
	}
}
