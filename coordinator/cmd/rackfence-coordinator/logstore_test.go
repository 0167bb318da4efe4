package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// logStoreNode is one single-member coordinator process (rig's) on a
// fixed data dir and fixed ports, started with whatever --raft-log-store a
// step asks.
type logStoreNode struct {
	t *testing.T
	c *rig.Coordinator
	// dir is the data dir.
	dir string
}

func (n *logStoreNode) start(store string) *testenv.Process { return n.c.Launch(storeFlag(store)...) }

// storeFlag is --raft-log-store STORE, or nothing for the default.
func storeFlag(store string) []string {
	if store == "" {
		return nil
	}
	return []string{"--raft-log-store", store}
}

// serve starts the node with store and waits until it answers a write.
func (n *logStoreNode) serve(store string) (*testenv.Process, *client.Client) {
	return n.serveWith(storeFlag(store))
}

// refused starts the node with store and expects it to exit non-zero
// with an error that names the store to use.
func (n *logStoreNode) refused(store, want string) {
	n.t.Helper()
	p := n.start(store)
	err, done := p.Wait(60 * time.Second)
	if !done {
		n.t.Fatalf("--raft-log-store %s on a data dir written by %s kept running; want a refusal:\n%s", store, want, p.Output())
	}
	if err == nil {
		n.t.Fatalf("--raft-log-store %s on a data dir written by %s exited 0; want an error:\n%s", store, want, p.Output())
	}
	out := p.Output()
	if !strings.Contains(out, "start with --raft-log-store "+want) || !strings.Contains(out, "re-join") {
		n.t.Fatalf("refusal does not say what to do (want --raft-log-store %s and re-join):\n%s", want, out)
	}
}

func newLogStoreNode(t *testing.T) *logStoreNode {
	return logStoreNodeIn(t, t.TempDir(), 0, 0)
}

// logStoreNodeIn lays out the node in dir (its data dir DIR/data) on the
// given ports (0: free ones); it starts nothing.
func logStoreNodeIn(t *testing.T, dir string, httpPort, raftPort int) *logStoreNode {
	c := rig.NewCoordinator(t, dir, rig.CoordOpts{NodeID: "ls1", HTTPPort: httpPort, RaftPort: raftPort})
	return &logStoreNode{t: t, c: c, dir: filepath.Join(dir, "data")}
}

func writeCreds(t *testing.T, c *client.Client, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := 0; i < n; i++ {
		if err := c.SetCredentials(ctx, fmt.Sprintf("c%d", i), wire.Credentials{Username: fmt.Sprintf("user%d", i), Password: "p"}); err != nil {
			t.Fatal(err)
		}
	}
}

func checkCreds(t *testing.T, c *client.Client, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := 0; i < n; i++ {
		cr, err := c.GetCredentials(ctx, fmt.Sprintf("c%d", i))
		if err != nil {
			t.Fatalf("after restart, credentials c%d: %v", i, err)
		}
		if want := fmt.Sprintf("user%d", i); cr.Username != want {
			t.Fatalf("after restart, credentials c%d hold user %q, want %q", i, cr.Username, want)
		}
	}
}

// boltLastIndex reads the last Raft log index kept in raft.db (0 = the
// log is not there). The node must be stopped.
func boltLastIndex(t *testing.T, dir string) uint64 {
	b, err := raftboltdb.NewBoltStore(filepath.Join(dir, "raft.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	last, err := b.LastIndex()
	if err != nil {
		t.Fatal(err)
	}
	return last
}

// A data dir written with --raft-log-store wal keeps its log in wal/,
// refuses to open as bolt, and opens again as wal (and with the default,
// auto) with every write.
func TestLogStoreWALRefusesBolt(t *testing.T) {
	n := newLogStoreNode(t)
	p, c := n.serve("wal")
	writeCreds(t, c, 40)
	p.Stop(30 * time.Second)
	if _, err := os.Stat(filepath.Join(n.dir, "wal", "wal-meta.db")); err != nil {
		t.Fatalf("--raft-log-store wal wrote no raft-wal directory: %v", err)
	}
	if last := boltLastIndex(t, n.dir); last != 0 {
		t.Fatalf("with the wal log store raft.db holds log entries up to %d; want none (stable store only)", last)
	}
	n.refused("bolt", "wal")
	p, c = n.serve("wal")
	checkCreds(t, c, 40)
	p.Stop(30 * time.Second)
	p, c = n.serve("") // auto: the store the data dir was written with
	checkCreds(t, c, 40)
	p.Stop(30 * time.Second)
}

// A new data dir with the default (auto) keeps its log in raft.db (bolt),
// refuses to open as wal, and opens again with the default and as bolt.
func TestLogStoreBoltRefusesWAL(t *testing.T) {
	n := newLogStoreNode(t)
	p, c := n.serve("")
	writeCreds(t, c, 40)
	p.Kill() // no snapshot on shutdown: the writes are only in the log
	if last := boltLastIndex(t, n.dir); last == 0 {
		t.Fatal("with the default log store raft.db holds no log entries")
	}
	n.refused("wal", "bolt")
	if _, err := os.Stat(filepath.Join(n.dir, "wal")); err == nil {
		ents, _ := os.ReadDir(filepath.Join(n.dir, "wal"))
		if len(ents) > 0 {
			t.Fatalf("the refused wal start left %d files in wal/", len(ents))
		}
	}
	p, c = n.serve("bolt")
	checkCreds(t, c, 40)
	p.Stop(30 * time.Second)
	p, c = n.serve("")
	checkCreds(t, c, 40)
	p.Stop(30 * time.Second)
}

func TestLogStoreUnknownRefused(t *testing.T) {
	n := newLogStoreNode(t)
	p := n.start("rocks")
	err, done := p.Wait(60 * time.Second)
	if !done || err == nil || !strings.Contains(p.Output(), `--raft-log-store "rocks" is not a log store`) {
		t.Fatalf("--raft-log-store rocks: want a refusal naming the flag; exited=%v err=%v:\n%s", done, err, p.Output())
	}
}
