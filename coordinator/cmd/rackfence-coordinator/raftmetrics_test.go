package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/testenv"
)

// A real coordinator exports raft's own timings on /metrics after a write.
func TestRaftTimingsOnMetrics(t *testing.T) {
	bin := testenv.Binary(t, "rackfence-coordinator")
	dir := t.TempDir()
	h, r := testenv.FreePort(t, "127.0.0.1"), testenv.FreePort(t, "127.0.0.1")
	u := fmt.Sprintf("http://127.0.0.1:%d", h)
	testenv.Start(t, "n1", bin, nil, "--node-id", "n1", "--data-dir", filepath.Join(dir, "1"),
		"--http-addr", fmt.Sprintf("127.0.0.1:%d", h), "--raft-addr", fmt.Sprintf("127.0.0.1:%d", r), "--raft-log-level", "error")
	var token string
	testenv.Eventually(t, 60*time.Second, "admin token", func() error {
		b, err := os.ReadFile(filepath.Join(dir, "1", "admin.token"))
		token = strings.TrimSpace(string(b))
		if token == "" {
			return fmt.Errorf("none yet: %v", err)
		}
		return nil
	})
	hc := &http.Client{Timeout: 20 * time.Second}
	do := func(method, path, body string) (int, string, error) {
		req, _ := http.NewRequest(method, u+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	testenv.Eventually(t, 60*time.Second, "a host written", func() error {
		code, body, err := do(http.MethodPut, "/v1/hosts/h1", `{"name":"h1","rack":"r1","bmc":{"address":"ipmi://10.0.0.1:623"},"online":true}`)
		if err != nil {
			return err
		}
		if code/100 != 2 {
			return fmt.Errorf("%d %s", code, body)
		}
		return nil
	})
	_, body, err := do(http.MethodGet, "/metrics", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"rackfence_raft_commitTime_count", "rackfence_raft_boltdb_storeLogs_count", "rackfence_apply_seconds_count"} {
		if !strings.Contains(body, "\n"+name+" ") {
			t.Errorf("/metrics has no %s", name)
		}
	}
}
