package coordinator

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"go.etcd.io/bbolt"

	"github.com/rackfence/rackfence/coordinator/fsm"
)

// Offline tools on a stopped member's data dir: inspect and recover.

// TierFile is where a member records its --tier in its data dir (inspect
// shows it).
const TierFile = "tier"

// Server is one Raft server of a configuration.
type Server struct {
	ID       string `json:"id"`
	Address  string `json:"address"`
	Suffrage string `json:"suffrage"`
}

// Inspection is what a stopped member's data dir holds.
type Inspection struct {
	DataDir  string `json:"dataDir"`
	NodeID   string `json:"nodeID"`
	Tier     string `json:"tier"`
	LogStore string `json:"logStore"`
	// LastIndex and LastTerm are the last Raft entry this member holds
	// (committed or not): after a lost quorum, recover the member with
	// the highest LastIndex.
	LastIndex     uint64   `json:"lastIndex"`
	LastTerm      uint64   `json:"lastTerm"`
	SnapshotIndex uint64   `json:"snapshotIndex"`
	CurrentTerm   uint64   `json:"currentTerm"`
	Configuration []Server `json:"configuration"`
	ClusterID     string   `json:"clusterID"`
	Generation    uint64   `json:"generation"`
	Hosts         int      `json:"hosts"`
	Racks         int      `json:"racks"`
	Leases        int      `json:"leases"`
}

// DataDirLogStore is the log store a data dir was written with.
func DataDirLogStore(dataDir string) string {
	if ok, _ := dirHasFiles(filepath.Join(dataDir, walDirName)); ok {
		return LogStoreWAL
	}
	return LogStoreBolt
}

// Inspect reads a stopped member's data dir without changing it: the
// newest snapshot and every log entry after it are applied to a scratch
// state machine.
func Inspect(dataDir string) (*Inspection, error) {
	if err := CheckDataDir(dataDir); err != nil {
		return nil, err
	}
	if !HasState(dataDir) {
		return nil, fmt.Errorf("%s holds no Raft state (no raft.db): is it a member's --data-dir?", dataDir)
	}
	in := &Inspection{DataDir: dataDir, LogStore: DataDirLogStore(dataDir)}
	in.NodeID = readSmallFile(filepath.Join(dataDir, "node-id"))
	in.Tier = readSmallFile(filepath.Join(dataDir, TierFile))
	log := hclog.NewNullLogger()
	stores, err := openRaftStores(dataDir, in.LogStore, log)
	if err != nil {
		if errors.Is(err, bbolt.ErrTimeout) {
			return nil, fmt.Errorf("%s is locked: stop the member before inspecting or recovering it (%w)", dataDir, err)
		}
		return nil, err
	}
	defer stores.Close()
	in.CurrentTerm, _ = stores.stable.GetUint64([]byte("CurrentTerm"))
	f := fsm.NewFSM()
	var conf raft.Configuration
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dataDir, 2, log)
	if err != nil {
		return nil, err
	}
	// The snapshot raft would restore: the newest that opens, and the log
	// must reach back to it (checkSnapshots).
	snapIndex, err := checkSnapshots(dataDir, stores.logs, snaps)
	if err != nil {
		return nil, err
	}
	list, err := snaps.List()
	if err != nil {
		return nil, err
	}
	for len(list) > 0 && list[0].Index != snapIndex {
		list = list[1:]
	}
	if len(list) > 0 {
		meta, rc, err := snaps.Open(list[0].ID)
		if err != nil {
			return nil, fmt.Errorf("open snapshot %s: %w", list[0].ID, err)
		}
		err = f.Restore(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", meta.ID, err)
		}
		conf = meta.Configuration
		in.SnapshotIndex, in.LastIndex, in.LastTerm = meta.Index, meta.Index, meta.Term
	}
	first, _ := stores.logs.FirstIndex()
	last, err := stores.logs.LastIndex()
	if err != nil {
		return nil, err
	}
	for i := max(first, in.SnapshotIndex+1); first > 0 && i <= last; i++ {
		var l raft.Log
		if err := stores.logs.GetLog(i, &l); err != nil {
			return nil, fmt.Errorf("log entry %d: %w", i, err)
		}
		switch l.Type {
		case raft.LogCommand:
			f.Apply(l.Index, l.Data)
		case raft.LogConfiguration:
			conf = raft.DecodeConfiguration(l.Data)
		}
		in.LastIndex, in.LastTerm = l.Index, l.Term
	}
	for _, s := range conf.Servers {
		in.Configuration = append(in.Configuration, Server{ID: string(s.ID), Address: string(s.Address), Suffrage: s.Suffrage.String()})
	}
	in.ClusterID, in.Generation = f.ClusterID(), f.Generation()
	in.Hosts, in.Racks, in.Leases = f.Sizes()
	return in, nil
}

func readSmallFile(p string) string {
	b, _ := os.ReadFile(p)
	return strings.TrimSpace(string(b))
}

// Recover rewrites a stopped member's Raft configuration to that member
// alone (hashicorp/raft RecoverCluster) after its cluster lost quorum. It
// returns the configuration before. Entries other members held and this
// one did not are lost; entries this one held that were never committed
// become committed.
func Recover(dataDir, raftAddr string) (before []Server, after Server, err error) {
	in, err := Inspect(dataDir)
	if err != nil {
		return nil, Server{}, err
	}
	if in.NodeID == "" {
		return nil, Server{}, fmt.Errorf("%s has no node-id file: is it a member's --data-dir?", dataDir)
	}
	before = in.Configuration
	after = Server{ID: in.NodeID, Address: raftAddr, Suffrage: raft.Voter.String()}
	if after.Address == "" {
		for _, s := range before {
			if s.ID == in.NodeID {
				after.Address = s.Address
			}
		}
	}
	if after.Address == "" {
		return before, after, fmt.Errorf("member %s is not in its own last configuration; give its Raft address with --raft-addr", in.NodeID)
	}
	log := hclog.NewNullLogger()
	stores, err := openRaftStores(dataDir, in.LogStore, log)
	if err != nil {
		return before, after, err
	}
	defer stores.Close()
	fileSnaps, err := raft.NewFileSnapshotStoreWithLogger(dataDir, 2, log)
	if err != nil {
		return before, after, err
	}
	snaps := &secureSnapshots{FileSnapshotStore: fileSnaps, dir: filepath.Join(dataDir, "snapshots")}
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(in.NodeID)
	rc.Logger = log
	_, trans := raft.NewInmemTransport(raft.ServerAddress(after.Address))
	conf := raft.Configuration{Servers: []raft.Server{{Suffrage: raft.Voter, ID: raft.ServerID(after.ID), Address: raft.ServerAddress(after.Address)}}}
	if err := raft.RecoverCluster(rc, raftFSM{fsm.NewFSM()}, stores.logs, stores.stable, snaps, trans, conf); err != nil {
		return before, after, fmt.Errorf("recover: %w", err)
	}
	return before, after, nil
}
