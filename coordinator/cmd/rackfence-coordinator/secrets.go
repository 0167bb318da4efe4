package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/rackfence/rackfence/shared/seal"
)

// secretsKeyFileName is the key file's name in the data dir (the default
// of --secrets-key-file).
const secretsKeyFileName = "secrets.key"

// openSecrets prepares what the store needs before it opens:
//
//   - umask 0077, so every file and directory this process creates (raft's
//     snapshots included, which raft creates 0644/0755) is owner-only;
//   - the secrets keyring from path (default DATA/secrets.key). A new
//     cluster (bootstrap of an empty data dir, no --join) generates it,
//     mode 0600. Any other member without the file starts without keys and
//     says what to do: it cannot seal or reveal passwords until the file is
//     added and the process gets SIGHUP;
//   - SIGHUP reloads the file (a new key added, an old one removed); a
//     file that fails to load leaves the previous keyring in place.
//
// Key material never reaches the log: only key IDs do.
func openSecrets(path, dataDir string, newCluster bool, log *slog.Logger) (*seal.Holder, error) {
	syscall.Umask(0o077)
	if path == "" {
		path = filepath.Join(dataDir, secretsKeyFileName)
	}
	h := &seal.Holder{Path: path}
	k, err := seal.Load(path)
	switch {
	case err == nil:
		log.Info("secrets key file loaded", "path", path, "keys", strings.Join(k.IDs(), ","), "primary", k.Primary())
	case errors.Is(err, fs.ErrNotExist) && newCluster:
		if k, err = seal.Generate(); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("--secrets-key-file %s: %w", path, err)
		}
		if err := k.Save(path); err != nil {
			return nil, fmt.Errorf("write --secrets-key-file %s: %w", path, err)
		}
		log.Info("generated the cluster's secrets key; every member needs a copy of this file (docs/operator.md, \"Secrets key\")",
			"path", path, "key", k.Primary())
	case errors.Is(err, fs.ErrNotExist):
		k = nil
		log.Warn("no secrets key file: this member can neither store nor reveal BMC passwords until it has one. "+
			"Copy the key file from another member to this path (or, upgrading a cluster that never had one, create it once with "+
			"'rackfencectl secrets keygen --key-file PATH' and copy it to every member), then send SIGHUP to this process",
			"path", path)
	default:
		return nil, fmt.Errorf("--secrets-key-file: %w", err)
	}
	h.Set(k)
	reload := make(chan os.Signal, 1)
	signal.Notify(reload, syscall.SIGHUP)
	go func() {
		for range reload {
			k, err := seal.Load(path)
			if err != nil {
				log.Error("SIGHUP: secrets key file not reloaded; the previous keys stay in use", "path", path, "err", err)
				continue
			}
			h.Set(k)
			log.Info("SIGHUP: secrets key file reloaded", "path", path, "keys", strings.Join(k.IDs(), ","), "primary", k.Primary())
		}
	}()
	return h, nil
}

// adoptKeyring installs a keyring received from the cluster (for the join
// response over mutual TLS): it is parsed, written to the holder's key
// file (0600) and put in use. It refuses to drop keys this member already
// has, so a join cannot make sealed records unreadable here.
func adoptKeyring(h *seal.Holder, b []byte, log *slog.Logger) error {
	k, err := seal.Parse(b)
	if err != nil {
		return fmt.Errorf("keyring from the cluster: %w", err)
	}
	for _, id := range h.Get().IDs() {
		if !k.Has(id) {
			return fmt.Errorf("keyring from the cluster lacks key %s that %s holds: merge the key files by hand (docs/operator.md, \"Secrets key\")", id, h.Path)
		}
	}
	if err := k.Save(h.Path); err != nil {
		return fmt.Errorf("write %s: %w", h.Path, err)
	}
	h.Set(k)
	log.Info("secrets key file received from the cluster", "path", h.Path, "keys", strings.Join(k.IDs(), ","), "primary", k.Primary())
	return nil
}
