package ctl

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/rig"
)

// TestIronicFigures imports RACKFENCE_IRONIC_NODES (default 1000) enroll
// ipmi nodes with one port each from a real Ironic and reports seconds,
// Ironic requests (through a recording proxy) and coordinator requests
// (rackfence_http_requests_total).
// Run: RACKFENCE_IRONIC_FIGURES=1 RACKFENCE_BIN=$PWD/bin go test ./ctl -run TestIronicFigures -v -timeout 30m
func TestIronicFigures(t *testing.T) {
	if os.Getenv("RACKFENCE_IRONIC_FIGURES") == "" {
		t.Skip("figures: set RACKFENCE_IRONIC_FIGURES=1")
	}
	n := 1000
	if v := os.Getenv("RACKFENCE_IRONIC_NODES"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	ir := rig.StartIronic(t)
	a := ironicAPI{t, ir.URL}
	start := time.Now()
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				nd := a.do(http.MethodPost, "/v1/nodes", map[string]any{"name": fmt.Sprintf("node-%d", i), "driver": "ipmi",
					"driver_info": map[string]any{"ipmi_address": fmt.Sprintf("10.1.%d.%d", i/250, i%250), "ipmi_username": "admin"},
					"extra":       map[string]any{"rack": fmt.Sprintf("r%d", i%20), "role": "worker"}})
				a.do(http.MethodPost, "/v1/ports", map[string]any{"node_uuid": nd["uuid"], "address": fmt.Sprintf("52:54:00:%02x:%02x:%02x", i>>16&255, i>>8&255, i&255)})
			}
		}()
	}
	for i := 0; i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	t.Logf("created %d nodes and ports in Ironic in %s", n, time.Since(start).Round(time.Second))
	var sb strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "node-%d: {password: pw-%d}\n", i, i)
	}
	creds := filepath.Join(t.TempDir(), "bmc.yaml")
	if err := os.WriteFile(creds, []byte(sb.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(t, ir.URL)
	c := startCoordinator(t)
	args := []string{"import", "ironic", "--ironic-url", rec.URL, "--rack-from", "extra.rack", "--credentials-file", creds}
	before := requestCount(t, c)
	start = time.Now()
	r := c.mustCtl(t, "", args...)
	secs := time.Since(start).Seconds()
	calls := requestCount(t, c) - before - 1 // the second scrape
	reqs, _ := rec.take()
	ironicCalls := len(reqs)
	if got := len(regexp.MustCompile(`(?m)^host/\S+ created$`).FindAllString(r.stdout, -1)); got != n {
		t.Fatalf("%d hosts created, want %d", got, n)
	}
	start = time.Now()
	r = c.mustCtl(t, "", args...)
	again := time.Since(start).Seconds()
	if strings.Contains(r.stdout, "host/node-0 created") {
		t.Errorf("the re-run created hosts again")
	}
	t.Logf("FIGURES: %d Ironic nodes: import %.2fs, %d Ironic GET requests, %d coordinator API calls; re-run (all unchanged) %.2fs",
		n, secs, ironicCalls, calls, again)
}
