package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/shared/seal"
)

// restoredFile records, in a restored data dir, what the restore did; its
// presence also lets the first start create the member's TLS files (a new
// cluster) although the data dir already holds Raft state.
const restoredFile = "restored.json"

func restoreMain(args []string) int {
	var snap, dataDir, nodeID, raftAddr, keyFile, logStore, out string
	host, _ := os.Hostname()
	fs := pflag.NewFlagSet("rackfence-coordinator restore", pflag.ContinueOnError)
	fs.StringVar(&snap, "snapshot", "", "backup file (rackfencectl cluster snapshot save)")
	fs.StringVar(&dataDir, "data-dir", "", "new, empty data dir of the restored cluster's first member")
	fs.StringVar(&nodeID, "node-id", host, "Raft server ID of that member")
	fs.StringVar(&raftAddr, "raft-addr", coordinator.DefaultRaftAddr, "Raft address that member will serve with (its --raft-addr)")
	fs.StringVar(&keyFile, "secrets-key-file", "", "the old cluster's secrets key file: it must open every sealed record; copied to DATA/secrets.key")
	fs.StringVar(&logStore, "raft-log-store", coordinator.DefaultLogStore, "Raft log store of the new data dir: auto (bolt), bolt or wal")
	fs.StringVarP(&out, "output", "o", "text", "text or json")
	validate := func() error {
		switch {
		case snap == "":
			return errors.New("--snapshot is required: the backup file to restore")
		case dataDir == "":
			return errors.New("--data-dir is required: a new, empty directory")
		case nodeID == "":
			return errors.New("--node-id is empty: give the member's ID")
		}
		if logStore != coordinator.LogStoreWAL && logStore != coordinator.LogStoreBolt && logStore != coordinator.LogStoreAuto {
			return fmt.Errorf("--raft-log-store %q: use %s, %s or %s", logStore, coordinator.LogStoreAuto, coordinator.LogStoreBolt, coordinator.LogStoreWAL)
		}
		return validOutput(out)
	}
	return runTool("restore", fs, validate, func() error {
		return restore(snap, dataDir, nodeID, raftAddr, keyFile, logStore, out)
	}, args)
}

func restore(snap, dataDir, nodeID, raftAddr, keyFile, logStore, out string) error {
	f, err := os.Open(snap)
	if err != nil {
		return fmt.Errorf("--snapshot: %w", err)
	}
	defer f.Close()
	var keys *seal.Keyring
	if keyFile != "" {
		if keys, err = seal.Load(keyFile); err != nil {
			return fmt.Errorf("--secrets-key-file: %w", err)
		}
	}
	start := time.Now()
	res, err := coordinator.RestoreDataDir(coordinator.RestoreOptions{Backup: f, DataDir: dataDir, NodeID: nodeID,
		RaftAddr: raftAddr, LogStore: logStore, Keys: keys, Now: time.Now()})
	if err != nil {
		if !errors.Is(err, coordinator.ErrDataDirNotEmpty) {
			os.RemoveAll(dataDir) // nothing half-written stays behind
		}
		return err
	}
	if keys != nil {
		if err := keys.Save(filepath.Join(dataDir, secretsKeyFileName)); err != nil {
			return fmt.Errorf("copy the secrets key into %s: %w", dataDir, err)
		}
	}
	if err := os.WriteFile(filepath.Join(dataDir, "node-id"), []byte(nodeID+"\n"), 0o600); err != nil {
		return err
	}
	if err := writeJSONFile(filepath.Join(dataDir, restoredFile), res); err != nil {
		return err
	}
	if err := auditTool(dataDir, nodeID, "restore", fmt.Sprintf("snapshot=%s index=%d generation=%d", filepath.Base(snap), res.Header.Index, res.Generation)); err != nil {
		return err
	}
	if out == "json" {
		return printJSON(stdout, res)
	}
	h := res.Header
	fmt.Fprintf(stdout, "Restored cluster %s (tier %s) from %s\n", h.ClusterID, h.Tier, snap)
	fmt.Fprintf(stdout, "  taken at index %d, term %d, %s on %s\n", h.Index, h.Term, h.CreatedAt.Format(time.RFC3339), h.NodeID)
	fmt.Fprintf(stdout, "  %d hosts, %d racks, %d credentials, %d tokens in %s\n", h.Hosts, h.Racks, h.Credentials, h.Tokens, time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(stdout, "  restore generation %d: every lease it grants has an epoch of at least %d\n", res.Generation, res.MinEpoch)
	fmt.Fprintf(stdout, "  %d leases the backup held were ended: their agents must acquire their racks again\n", res.EndedLeases)
	if keys == nil {
		fmt.Fprintln(stdout, "  no --secrets-key-file: the backup has no sealed credentials")
	} else {
		fmt.Fprintf(stdout, "  secrets key file copied to %s\n", filepath.Join(dataDir, secretsKeyFileName))
	}
	fmt.Fprintf(stdout, "Next: start rackfence-coordinator --data-dir %s --raft-addr %s (no --join, no --bootstrap); it leads a new cluster of one.\n", dataDir, raftAddr)
	fmt.Fprintln(stdout, "The old cluster's tokens are valid on it; with TLS it has a new CA unless you pass the old one with --ca-cert/--ca-key.")
	fmt.Fprintln(stdout, "Then start new members with --join as usual. Never start the old cluster's members again.")
	return nil
}
