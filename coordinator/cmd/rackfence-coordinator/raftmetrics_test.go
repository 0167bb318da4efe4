package main

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// A real coordinator exports raft's own timings on /metrics once it has
// committed writes (StartCoordinator returns after one).
func TestRaftTimingsOnMetrics(t *testing.T) {
	c := rig.StartCoordinator(t, t.TempDir(), rig.CoordOpts{})
	tok, err := client.ReadTokenFile(filepath.Join(c.Dir, "data", "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, c.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := testenv.HTTPClient(c.CAFile).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, name := range []string{"rackfence_raft_commit_seconds_count", "rackfence_raft_leader_dispatch_log_seconds_count",
		"rackfence_apply_seconds_count", "rackfence_raft_became_leader_total"} {
		if !strings.Contains(string(b), "\n"+name+" ") {
			t.Errorf("/metrics (%d) has no %s", resp.StatusCode, name)
		}
	}
	// Base units with help text; the millisecond summaries are gone.
	for _, want := range []string{"# HELP rackfence_raft_commit_seconds Leader:", "# TYPE rackfence_raft_commit_seconds histogram",
		"\nrackfence_raft_became_leader_total 1\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics has no %q", want)
		}
	}
	for _, old := range []string{"rackfence_raft_commitTime", "rackfence_raft_boltdb_storeLogs"} {
		if strings.Contains(string(b), old) {
			t.Errorf("/metrics still has %s (renamed; see docs/operator.md)", old)
		}
	}
}
