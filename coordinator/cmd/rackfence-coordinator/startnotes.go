package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/internal/pki"
)

// freshRestore reports whether the data dir was prepared by restore and
// has not started yet (no TLS files): it then starts as a new cluster.
func freshRestore(o *Config, log *slog.Logger) (bool, error) {
	b, err := os.ReadFile(filepath.Join(o.dataDir, restoredFile))
	if err != nil || fileExists(filepath.Join(o.dataDir, "tls", pki.CACertFile)) {
		return false, nil
	}
	var res coordinator.RestoreResult
	_ = json.Unmarshal(b, &res)
	if res.RaftAddr != "" && res.RaftAddr != o.raftAddr {
		return false, fmt.Errorf("--raft-addr %s: restore prepared %s for Raft address %s (its configuration names it); start with --raft-addr %s, or restore again into an empty dir with the address you want",
			o.raftAddr, o.dataDir, res.RaftAddr, res.RaftAddr)
	}
	log.Warn("first start of a restored data dir: this member leads a new cluster of one on the backup's state",
		"clusterID", res.Header.ClusterID, "backupIndex", res.Header.Index, "generation", res.Generation,
		"minEpoch", res.MinEpoch, "endedLeases", res.EndedLeases)
	return true, nil
}

// storeTier records --tier in the data dir (inspect shows it).
func storeTier(o *Config) error {
	p := filepath.Join(o.dataDir, coordinator.TierFile)
	if err := os.WriteFile(p, []byte(o.tier+"\n"), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// noteRecovery logs, once, that recover rewrote this member's
// configuration (the audit trail has the record too).
func noteRecovery(o *Config, log *slog.Logger) {
	p := filepath.Join(o.dataDir, recoveredFile)
	b, err := os.ReadFile(p)
	if err != nil {
		return
	}
	var rec Recovery
	_ = json.Unmarshal(b, &rec)
	var last uint64
	if rec.Member != nil {
		last = rec.Member.LastIndex
	}
	log.Warn("this member was recovered from a lost quorum: it is a cluster of one until new members join; "+
		"wipe the old members' data dirs before they start again, with --join",
		"recoveredAt", rec.Time, "before", rec.Before, "lastIndex", last)
	if err := os.Rename(p, p+".seen"); err != nil {
		log.Warn("could not mark the recovery as seen", "path", p, "err", err)
	}
}
