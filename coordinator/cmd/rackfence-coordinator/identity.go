package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// nodeIDFile is where a member keeps its node ID, in its data dir.
func nodeIDFile(o *Config) string { return filepath.Join(o.dataDir, "node-id") }

// resolveIdentity settles the node ID and whether to bootstrap. The node
// ID is kept in the data dir: a restarted node needs no --node-id, and a
// different one by mistake is refused. --bootstrap, when not given, is
// true for a new data dir with no --join.
func resolveIdentity(o *Config, existing bool, log *slog.Logger) (bootstrap bool, err error) {
	idFile := nodeIDFile(o)
	if b, err := os.ReadFile(idFile); err == nil {
		stored := strings.TrimSpace(string(b))
		if o.fs.Changed("node-id") { // a RACKFENCE_NODE_ID counts too (envflag sets it)
			if stored != o.nodeID {
				return false, fmt.Errorf("--node-id %q differs from %q stored in %s: a member keeps its ID; use the stored one or a new data dir", o.nodeID, stored, idFile)
			}
		}
		o.nodeID = stored
	} else if existing {
		log.Warn("data dir has Raft state but no node-id file; using --node-id", "nodeID", o.nodeID)
	}
	if !o.fs.Changed("bootstrap") {
		return !existing && o.join == "", nil
	}
	return o.bootstrap, nil
}

// storeNodeID writes the node ID into the data dir (once the store is open).
func storeNodeID(o *Config) error {
	if err := os.WriteFile(nodeIDFile(o), []byte(o.nodeID+"\n"), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", nodeIDFile(o), err)
	}
	return nil
}
