package ctl

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestSnapshotSaveStatus: save writes a checked backup (and nothing when
// refused), status reads it offline, a corrupt copy exits 1.
func TestSnapshotSaveStatus(t *testing.T) {
	c := startCoordinator(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "c.backup")

	// A viewer may not take a backup: nothing is left behind.
	tr, err := c.admin.CreateToken(t.Context(), wire.TokenRequest{Role: wire.RoleViewer, Name: "v"})
	if err != nil {
		t.Fatal(err)
	}
	viewerFile := filepath.Join(dir, "viewer.token")
	if err := os.WriteFile(viewerFile, []byte(tr.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCtl(t, map[string]string{"RACKFENCE_COORDINATOR": c.url, "RACKFENCE_TOKEN_FILE": viewerFile}, "", nil, "cluster", "snapshot", "save", file)
	if r.code == 0 {
		t.Fatalf("a viewer saved a backup: %s", r)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("a refused save left files behind: %v", ents)
	}

	r = c.mustCtl(t, "", "cluster", "snapshot", "save", file)
	if !strings.Contains(r.stdout, "checksum OK") || !strings.Contains(r.stdout, "secrets key file") {
		t.Errorf("save output: %s", r)
	}
	r = c.mustCtl(t, "", "cluster", "snapshot", "status", file, "-o", "json")
	var rep snapshotReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || !rep.ChecksumOK || rep.Header.Tier != "test" || rep.Header.ClusterID == "" || rep.Header.Credentials != 0 {
		t.Fatalf("status -o json: %v\n%s", err, r)
	}
	r = c.mustCtl(t, "", "cluster", "snapshot", "status", file)
	for _, want := range []string{"Raft index", "Restore generation", "Checksum", "OK"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("status output lacks %q:\n%s", want, r.stdout)
		}
	}

	b, _ := os.ReadFile(file)
	b[len(b)-5] ^= 0xff
	bad := filepath.Join(dir, "bad.backup")
	if err := os.WriteFile(bad, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r = c.ctl(t, "", "cluster", "snapshot", "status", bad)
	if r.code != ExitFailed || !strings.Contains(r.stdout, "MISMATCH") || !strings.Contains(r.stderr, "use another backup") {
		t.Errorf("status of a corrupt backup: %s", r)
	}
}
