package fsm

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"sort"
)

// SnapshotSummary is what a backup's header records of a snapshot body
// (coordinator/backup.go): counts and keys from its meta record.
type SnapshotSummary struct {
	ClusterID   string
	Generation  uint64
	Hosts       int
	Racks       int
	Credentials int
	Tokens      int
	// SecretsKeyIDs are the keys that seal its credentials (sorted).
	SecretsKeyIDs []string
}

// ScanSnapshot reads a whole snapshot body (to its end, so a caller can
// count and checksum it) and summarizes its meta record; hosts are not
// decoded.
func ScanSnapshot(r io.Reader) (SnapshotSummary, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	var meta snapMeta
	line, err := br.ReadString('\n')
	if err != nil {
		return SnapshotSummary{}, fmt.Errorf("snapshot header: %w", err)
	}
	var name string
	var ver int
	if _, err := fmt.Sscanf(line, "%s %d\n", &name, &ver); err != nil || name != snapHeader {
		return SnapshotSummary{}, fmt.Errorf("snapshot header %q is not %q", line, snapHeader)
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return SnapshotSummary{}, fmt.Errorf("snapshot body: %w", err)
	}
	if err := json.NewDecoder(zr).Decode(&meta); err != nil {
		return SnapshotSummary{}, fmt.Errorf("snapshot meta: %w", err)
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		return SnapshotSummary{}, err
	}
	return SnapshotSummary{ClusterID: meta.ClusterID, Generation: meta.Generation, Hosts: meta.HostCount,
		Racks: len(meta.Racks), Credentials: len(meta.Creds), Tokens: len(meta.Tokens),
		SecretsKeyIDs: sealedKeyIDs(meta.Creds)}, nil
}

func sealedKeyIDs(creds map[string]credRec) []string {
	seen := map[string]bool{}
	ids := []string{}
	for _, c := range creds {
		if c.Sealed != nil && !seen[c.Sealed.KeyID] {
			seen[c.Sealed.KeyID] = true
			ids = append(ids, c.Sealed.KeyID)
		}
	}
	sort.Strings(ids)
	return ids
}
