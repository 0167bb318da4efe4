package coordinator_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/backupfile"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/seal"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/coordtest"
	"github.com/rackfence/rackfence/testkit/testenv"
)

func host(name, rack string) *wire.Host {
	return &wire.Host{Name: name, Rack: rack, Online: true,
		BMC: wire.BMC{Address: "redfish+http://127.0.0.1:1/redfish/v1/Systems/1", Credentials: "bmc"}}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// saveBackup takes a backup through the API and checks it.
func saveBackup(t *testing.T, cl *client.Client) ([]byte, backupfile.Header) {
	t.Helper()
	var buf bytes.Buffer
	if err := cl.Backup(ctx(t), &buf, func() error { buf.Reset(); return nil }); err != nil {
		t.Fatalf("backup: %v", err)
	}
	h, err := backupfile.Verify(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("verify the backup: %v", err)
	}
	return buf.Bytes(), h
}

// serve starts a member on a restored data dir (tier "restored") and
// waits until it leads.
func serve(t *testing.T, dir, nodeID, raftAddr string, keys *seal.Keyring) (*coordinator.Store, string) {
	t.Helper()
	holder := &seal.Holder{Path: "(test keyring)"}
	holder.Set(keys)
	c := coordtest.Start(t, coordtest.Options{Tier: "restored", ID: nodeID, Dir: dir, RaftPort: portOf(t, raftAddr),
		Secrets: holder, NoCredentials: true})
	return c.Store, c.URL
}

// TestRestoreFencesOldEpochs: an agent holds a lease on cluster A with an
// epoch granted after the backup; the backup restored into cluster B
// refuses that epoch, and B's next grant of the rack is above it.
func TestRestoreFencesOldEpochs(t *testing.T) {
	a := coordtest.Start(t, coordtest.Options{})
	for i := range 5 {
		a.Apply(host(fmt.Sprintf("r1-h%d", i), "r1"))
	}
	agentTok := a.Token(wire.RoleAgent, "r1") // from before the backup: B knows it too
	agent := newClient(t, a.URL, agentTok)
	held, err := agent.AcquireLease(ctx(t), "r1", wire.LeaseRequest{Holder: "agent-1", TTL: wire.Duration(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	backup, hdr := saveBackup(t, a.Admin)
	if hdr.Hosts != 5 || hdr.Credentials != 1 || hdr.Generation != 0 || hdr.Index == 0 || len(hdr.SecretsKeyIDs) != 1 {
		t.Fatalf("header %+v", hdr)
	}
	audit, err := a.Admin.Audit(ctx(t), 100)
	if err != nil {
		t.Fatal(err)
	}
	downloads := 0
	for _, r := range audit.Items {
		if r.Method == "GET" && r.Route == "/v1/cluster/snapshot" && r.Actor == "admin" && r.Code == 200 {
			downloads++
		}
	}
	if downloads != 1 {
		t.Errorf("backup downloads in the audit trail: %d, want 1", downloads)
	}
	// A moves on: many writes, then the agent takes a newer epoch.
	for i := range 50 {
		a.Apply(host(fmt.Sprintf("r9-h%02d", i), "r9"))
	}
	if err := agent.ReleaseLease(ctx(t), "r1", wire.LeaseRequest{Holder: "agent-1", Epoch: held.Epoch}); err != nil {
		t.Fatal(err)
	}
	newer, err := agent.AcquireLease(ctx(t), "r1", wire.LeaseRequest{Holder: "agent-1", TTL: wire.Duration(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if newer.Epoch <= hdr.Index+50 {
		t.Fatalf("epoch on A %d, backup index %d: the test needs A's epoch well above the backup's index", newer.Epoch, hdr.Index)
	}

	dir := filepath.Join(t.TempDir(), "b")
	raftAddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, "127.0.0.1"))
	res, err := coordinator.RestoreDataDir(coordinator.RestoreOptions{Backup: bytes.NewReader(backup), DataDir: dir,
		NodeID: "b-1", RaftAddr: raftAddr, Keys: a.Keys, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Generation != 1 || res.EndedLeases != 1 || res.MinEpoch != 1<<fsm.GenerationShift {
		t.Fatalf("restore result %+v", res)
	}
	st, url := serve(t, dir, "b-1", raftAddr, a.Keys)
	agentB := newClient(t, url, agentTok)

	// The old agent, still holding A's newer epoch, is refused by B.
	_, err = agentB.RenewLease(ctx(t), "r1", wire.LeaseRequest{Holder: "agent-1", Epoch: newer.Epoch})
	if !client.IsStaleEpoch(err) {
		t.Fatalf("renewing A's epoch %d on B: %v, want stale_epoch", newer.Epoch, err)
	}
	// So is the epoch the backup held (its lease was ended by the restore).
	_, err = agentB.RenewLease(ctx(t), "r1", wire.LeaseRequest{Holder: "agent-1", Epoch: held.Epoch})
	if !client.IsStaleEpoch(err) {
		t.Fatalf("renewing the backup's epoch %d on B: %v, want stale_epoch", held.Epoch, err)
	}
	granted, err := agentB.AcquireLease(ctx(t), "r1", wire.LeaseRequest{Holder: "agent-2", TTL: wire.Duration(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if granted.Epoch <= newer.Epoch || granted.Epoch>>fsm.GenerationShift != 1 || granted.Epoch >= 1<<53 {
		t.Fatalf("B granted epoch %d; A's newest was %d: want above it, generation 1, below 2^53", granted.Epoch, newer.Epoch)
	}
	// The restored state: hosts, credentials (the key opens them), the
	// lease history with the ended lease, B alone as member.
	adminTok, err := client.ReadTokenFile(filepath.Join(a.Dir, coordinator.AdminTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	adminB := newClient(t, url, adminTok)
	hosts, err := adminB.ListHosts(ctx(t), client.HostFilter{})
	if err != nil || len(hosts.Items) != 5 {
		t.Fatalf("hosts on B: %v %v", len(hosts.Items), err)
	}
	hist, err := adminB.LeaseHistory(ctx(t), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(hist.Items) < 2 || hist.Items[0].Epoch != held.Epoch || hist.Items[0].End != fsm.EndRestored {
		t.Fatalf("lease history on B: %+v", hist.Items)
	}
	if pw, err := st.RevealPassword("bmc", mustCreds(t, st, "bmc")); err != nil || pw != "password" {
		t.Fatalf("reveal on B: %q %v", pw, err)
	}
	if ms, _ := st.Members(); len(ms) != 1 || ms[0].ID != "b-1" {
		t.Fatalf("members of B: %+v", ms)
	}
}

func newClient(t *testing.T, url, tok string) *client.Client {
	t.Helper()
	cl, err := client.New(client.Config{Coordinator: url, Token: tok, RetryFor: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func mustCreds(t *testing.T, st *coordinator.Store, name string) fsm.StoredCredentials {
	c, ok := st.FSM().Credentials(name)
	if !ok {
		t.Fatalf("credentials %s missing", name)
	}
	return c
}

// TestRestoreRefuses: a corrupt backup, a non-empty data dir, a missing or
// wrong secrets key.
func TestRestoreRefuses(t *testing.T) {
	a := coordtest.Start(t, coordtest.Options{})
	a.Apply(host("r1-h0", "r1"))
	backup, _ := saveBackup(t, a.Admin)
	restore := func(b []byte, dir string, keys *seal.Keyring) error {
		_, err := coordinator.RestoreDataDir(coordinator.RestoreOptions{Backup: bytes.NewReader(b), DataDir: dir,
			NodeID: "b-1", RaftAddr: "127.0.0.1:1", Keys: keys, Now: time.Now()})
		return err
	}
	corrupt := bytes.Clone(backup)
	corrupt[len(corrupt)-10] ^= 0xff
	if err := restore(corrupt, filepath.Join(t.TempDir(), "x"), a.Keys); !errors.Is(err, backupfile.ErrChecksum) {
		t.Errorf("corrupt backup: %v, want ErrChecksum", err)
	}
	if err := restore(backup[:len(backup)/2], filepath.Join(t.TempDir(), "x"), a.Keys); !errors.Is(err, backupfile.ErrChecksum) {
		t.Errorf("truncated backup: %v, want ErrChecksum", err)
	}
	if _, err := backupfile.Verify(bytes.NewReader(corrupt)); !errors.Is(err, backupfile.ErrChecksum) {
		t.Errorf("verify a corrupt backup: %v, want ErrChecksum", err)
	}
	if err := restore(backup, a.Dir, a.Keys); !errors.Is(err, coordinator.ErrDataDirNotEmpty) {
		t.Errorf("non-empty dir: %v, want ErrDataDirNotEmpty", err)
	}
	other, _ := seal.Generate()
	if err := restore(backup, filepath.Join(t.TempDir(), "x"), other); !errors.Is(err, coordinator.ErrSecretsKey) {
		t.Errorf("wrong key: %v, want ErrSecretsKey", err)
	}
	if err := restore(backup, filepath.Join(t.TempDir(), "x"), nil); !errors.Is(err, coordinator.ErrSecretsKey) {
		t.Errorf("no key: %v, want ErrSecretsKey", err)
	}
	if err := restore(backup, filepath.Join(t.TempDir(), "x"), a.Keys); err != nil {
		t.Errorf("the intact backup: %v", err)
	}
}

// TestInspect: a running member's data dir is refused (its files are
// locked) with what to do; once stopped, inspect reads it without a
// change.
func TestInspect(t *testing.T) {
	testenv.SkipShort(t) // waits out the data dir lock (5 s)
	a := coordtest.Start(t, coordtest.Options{})
	a.Apply(host("r1-h0", "r1"))
	if _, err := coordinator.Inspect(a.Dir); err == nil || !strings.Contains(err.Error(), "stop the member") {
		t.Fatalf("inspect of a running member: %v", err)
	}
	a.Close()
	in, err := coordinator.Inspect(a.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if in.Hosts != 1 || in.ClusterID == "" || len(in.Configuration) != 1 || in.Configuration[0].Suffrage != "Voter" || in.LastIndex == 0 || in.LastTerm == 0 {
		t.Fatalf("inspect: %+v", in)
	}
	again, err := coordinator.Inspect(a.Dir)
	if err != nil || again.LastIndex != in.LastIndex {
		t.Fatalf("a second inspect: %+v %v", again, err)
	}
}
