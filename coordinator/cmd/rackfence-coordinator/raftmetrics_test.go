package main

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/testenv/rig"
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
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, name := range []string{"rackfence_raft_commitTime_count", "rackfence_raft_leader_dispatchLog_count", "rackfence_raft_wal_log_appends", "rackfence_apply_seconds_count"} {
		if !strings.Contains(string(b), "\n"+name+" ") {
			t.Errorf("/metrics (%d) has no %s", resp.StatusCode, name)
		}
	}
}
