package coordinator

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/backupfile"
	"github.com/rackfence/rackfence/shared/seal"
)

// RestoreOptions is what rackfence-coordinator restore was given.
type RestoreOptions struct {
	// Backup is the backup file (rackfencectl cluster snapshot save).
	Backup io.Reader
	// DataDir must not exist or be empty.
	DataDir, NodeID, RaftAddr string
	// LogStore is the Raft log store to create (LogStoreBolt by default).
	LogStore string
	// Keys must open every sealed record of the backup; nil is accepted
	// only for a backup without sealed records.
	Keys *seal.Keyring
	// Now is when the restore happened (ends the held leases).
	Now    time.Time
	Logger hclog.Logger
}

// RestoreResult is what a restore did.
type RestoreResult struct {
	Header BackupHeader `json:"header"`
	// Generation is the restored cluster's restore generation: every
	// lease it grants has an epoch at or above EpochAt(Generation, 0).
	Generation  uint64 `json:"generation"`
	EndedLeases int    `json:"endedLeases"`
	// MinEpoch is EpochAt(Generation, 0).
	MinEpoch uint64 `json:"minEpoch"`
	// NodeID and RaftAddr are the member the data dir was prepared for.
	NodeID   string `json:"nodeID"`
	RaftAddr string `json:"raftAddr"`
}

// RestoreDataDir prepares o.DataDir so that a member started on it leads a
// new cluster of one holding the backup's state (like etcdutl snapshot
// restore): the Raft configuration names only o.NodeID at o.RaftAddr, the
// restore generation is one above the backup's, every lease the backup
// held is ended ("restored"), and the old members are forgotten. Other
// members then join it as usual.
func RestoreDataDir(o RestoreOptions) (RestoreResult, error) {
	var res RestoreResult
	if o.LogStore == "" || o.LogStore == LogStoreAuto {
		o.LogStore = LogStoreBolt // a new data dir
	}
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if err := emptyDir(o.DataDir); err != nil {
		return res, err
	}
	br := bufio.NewReaderSize(o.Backup, 256<<10)
	hdr, err := backupfile.Read(br)
	if err != nil {
		return res, err
	}
	res.Header = hdr
	f := fsm.NewFSM()
	if err := backupfile.CheckBody(br, hdr, f.Restore); err != nil {
		return res, err
	}
	if err := checkKeys(f, o.Keys); err != nil {
		return res, err
	}
	ended, err := f.Restored(hdr.Index, o.Now.UTC())
	if err != nil {
		return res, err
	}
	res.EndedLeases = ended
	res.Generation = f.Generation()
	res.MinEpoch = fsm.EpochAt(res.Generation, 0)
	res.NodeID, res.RaftAddr = o.NodeID, o.RaftAddr

	if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
		return res, fmt.Errorf("create data dir %s: %w", o.DataDir, err)
	}
	if err := writeRestoredRaft(o, f, hdr.Index); err != nil {
		return res, err
	}
	return res, nil
}

// writeRestoredRaft writes the state as a Raft snapshot at index (term 1)
// whose configuration is this member alone, and term 1 in the stable
// store, so the member elects itself at term 2.
func writeRestoredRaft(o RestoreOptions, f *fsm.FSM, index uint64) error {
	stores, err := openRaftStores(o.DataDir, o.LogStore, o.Logger)
	if err != nil {
		return err
	}
	defer stores.Close()
	if err := stores.stable.SetUint64([]byte("CurrentTerm"), 1); err != nil {
		return fmt.Errorf("write the Raft term: %w", err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(o.DataDir, 2, o.Logger)
	if err != nil {
		return fmt.Errorf("snapshot store in %s: %w", o.DataDir, err)
	}
	conf := raft.Configuration{Servers: []raft.Server{{Suffrage: raft.Voter, ID: raft.ServerID(o.NodeID), Address: raft.ServerAddress(o.RaftAddr)}}}
	_, trans := raft.NewInmemTransport(raft.ServerAddress(o.RaftAddr))
	sink, err := snaps.Create(raft.SnapshotVersionMax, index, 1, conf, index, trans)
	if err != nil {
		return fmt.Errorf("create the restored snapshot: %w", err)
	}
	snap, err := f.Snapshot()
	if err != nil {
		return err
	}
	if err := (raftSnapshot{snap}).Persist(sink); err != nil {
		return err
	}
	_, err = SecureDataDir(o.DataDir)
	return err
}

// checkKeys opens every sealed value (passwords and data maps) with keys.
func checkKeys(f *fsm.FSM, keys *seal.Keyring) error {
	creds, _ := f.AllCredentials()
	for _, c := range creds {
		name := c.Name
		var pending *seal.Sealed
		if c.BMC != nil {
			pending = c.BMC.Pending // a BMC account's pending password
		}
		for _, v := range []struct {
			what string
			s    *seal.Sealed
			aad  []byte
		}{{"", c.Sealed, credentialsAAD(name)}, {" (data)", c.Data, credentialsDataAAD(name)}, {" (pending password)", pending, credentialsAAD(name)}} {
			if v.s == nil {
				continue
			}
			if keys == nil {
				return fmt.Errorf("%w: credentials %s%s are sealed with key %s and no --secrets-key-file was given; give the old cluster's secrets key file",
					ErrSecretsKey, name, v.what, v.s.KeyID)
			}
			if _, err := keys.Open(*v.s, v.aad); err != nil {
				return fmt.Errorf("%w: credentials %s%s (key %s): %v; give the secrets key file of the cluster the backup was taken from",
					ErrSecretsKey, name, v.what, v.s.KeyID, err)
			}
		}
	}
	return nil
}

// emptyDir accepts a missing or empty directory.
func emptyDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("data dir %s: %w", dir, err)
	}
	if len(ents) > 0 {
		return fmt.Errorf("%w: %s holds %s (and %d more); restore into a new, empty directory",
			ErrDataDirNotEmpty, dir, filepath.Join(dir, ents[0].Name()), len(ents)-1)
	}
	return nil
}
