package ctl

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/shared/backupfile"
)

func init() {
	register(&command{
		path:  "cluster snapshot save",
		usage: "FILE",
		short: "Save a backup of the whole cluster state to FILE (admin)",
		long: `Streams a consistent snapshot from the leader (it takes a Raft snapshot for
it) into FILE, then checks its checksum. The file holds every host, rack,
lease history, token (hashed) and credentials record; passwords stay
sealed, so restoring it needs the cluster's secrets key file
(DATA/secrets.key): keep a copy of that file apart from the backups.
Written to FILE.part first and renamed when complete and checked.

Restore with:
  rackfence-coordinator restore --snapshot FILE --data-dir NEW-DIR \
    --node-id ID --raft-addr ADDR --secrets-key-file KEY`,
		setup: snapshotSave,
	})
	register(&command{
		path:  "cluster snapshot status",
		usage: "FILE",
		short: "Show what a backup file holds and check its checksum (local, no coordinator)",
		long: `Reads FILE only: cluster ID, tier, Raft index and term, restore
generation, when and where it was taken, record counts, the secrets keys
a restore needs, and whether the body matches its SHA-256. Exit 1 when it
does not (truncated or corrupt: use another backup).`,
		setup: snapshotStatus,
	})
}

// snapshotReport is what save and status print.
type snapshotReport struct {
	File       string            `json:"file"`
	Header     backupfile.Header `json:"header"`
	ChecksumOK bool              `json:"checksumOK"`
	Error      string            `json:"error,omitempty"`
	Took       string            `json:"took,omitempty"`
}

func snapshotSave(fs *pflag.FlagSet) func(*Ctx, []string) error {
	return func(x *Ctx, args []string) error {
		if len(args) != 1 {
			return usagef("cluster snapshot save takes one argument: the FILE to write")
		}
		file := args[0]
		cl, err := x.Client()
		if err != nil {
			return err
		}
		part := file + ".part"
		f, err := os.OpenFile(part, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o600)
		if err != nil {
			return failf("FILE: %v", err)
		}
		defer os.Remove(part)
		defer f.Close()
		start := time.Now()
		reset := func() error {
			if err := f.Truncate(0); err != nil {
				return err
			}
			_, err := f.Seek(0, io.SeekStart)
			return err
		}
		if err := cl.Backup(x.ctx, f, reset); err != nil {
			return err
		}
		took := time.Since(start)
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return failf("%s: %v", part, err)
		}
		h, err := backupfile.Verify(f)
		if err != nil {
			return failf("the backup received is not valid (%v); nothing was written to %s: try again", err, file)
		}
		if err := f.Sync(); err != nil {
			return failf("%s: %v", part, err)
		}
		if err := os.Rename(part, file); err != nil {
			return failf("rename %s to %s: %v", part, file, err)
		}
		rep := snapshotReport{File: file, Header: h, ChecksumOK: true, Took: took.Round(time.Millisecond).String()}
		return x.print(rep, func(w io.Writer) {
			fmt.Fprintf(w, "Saved %s: %s in %s, index %d, %d hosts, checksum OK\n", file, byteSize(h.BodyBytes), rep.Took, h.Index, h.Hosts)
			fmt.Fprintf(w, "Passwords in it are sealed: restoring needs the secrets key file (keys: %s). Keep a copy of it apart from the backup.\n", keyList(h.SecretsKeyIDs))
		})
	}
}

func snapshotStatus(fs *pflag.FlagSet) func(*Ctx, []string) error {
	return func(x *Ctx, args []string) error {
		if len(args) != 1 {
			return usagef("cluster snapshot status takes one argument: the backup FILE")
		}
		f, err := os.Open(args[0])
		if err != nil {
			return failf("FILE: %v", err)
		}
		defer f.Close()
		h, err := backupfile.Verify(f)
		rep := snapshotReport{File: args[0], Header: h, ChecksumOK: err == nil}
		if err != nil {
			if !errors.Is(err, backupfile.ErrChecksum) {
				return failf("%s: %v", args[0], err)
			}
			rep.Error = err.Error()
		}
		perr := x.print(rep, func(w io.Writer) {
			k := &kv{}
			k.add("File", filepath.Clean(args[0]))
			k.add("Cluster ID", h.ClusterID)
			k.add("Tier", h.Tier)
			k.add("Taken", h.CreatedAt.Format(time.RFC3339)+" on "+h.NodeID)
			k.add("Raft index", strconv.FormatUint(h.Index, 10)+" (term "+strconv.FormatUint(h.Term, 10)+")")
			k.add("Restore generation", strconv.FormatUint(h.Generation, 10))
			k.add("Hosts", strconv.Itoa(h.Hosts))
			k.add("Racks", strconv.Itoa(h.Racks))
			k.add("Credentials", strconv.Itoa(h.Credentials))
			k.add("Tokens", strconv.Itoa(h.Tokens))
			k.add("Secrets keys needed", keyList(h.SecretsKeyIDs))
			k.add("Size", byteSize(h.BodyBytes))
			k.add("SHA-256", h.BodySHA256)
			if rep.ChecksumOK {
				k.add("Checksum", "OK")
			} else {
				k.add("Checksum", "MISMATCH: "+rep.Error)
			}
			k.write(w)
		})
		if perr != nil {
			return perr
		}
		if !rep.ChecksumOK {
			return failf("%s is truncated or corrupt: use another backup", args[0])
		}
		return nil
	}
}

func keyList(ids []string) string {
	if len(ids) == 0 {
		return "none (no sealed credentials)"
	}
	return strings.Join(ids, ", ")
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
