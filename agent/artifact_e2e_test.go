package agent_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestImageCacheProcess: rackfence-agent started with --artifact-addr and
// --image-cache-dir gives the BMC the rack's URL of a verified image (the
// origin fetched once), and fails a host whose image does not match its
// checksum with both digests; the cache's metrics count it.
func TestImageCacheProcess(t *testing.T) {
	body := strings.Repeat("rackfence live iso ", 1<<16)
	sum := sha256.Sum256([]byte(body))
	good := hex.EncodeToString(sum[:])
	var gets atomic.Int64
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery == "" {
			gets.Add(1) // the good image's fetches
		}
		http.ServeContent(w, r, "os.iso", time.Unix(0, 0), strings.NewReader(body))
	}))
	defer origin.Close()

	e := newEnv(t, envOpts{bmcs: 2})
	e.apply(e.hostSpec("c0", "r1", 0))
	e.apply(e.hostSpec("c1", "r1", 1))
	art := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, "127.0.0.1"))
	maddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, "127.0.0.1"))
	e.startAgent("r1", "a1", "--metrics-addr", maddr, "--artifact-addr", art,
		"--image-cache-dir", filepath.Join(e.dir, "imagecache"), "--image-cache-size", "64MiB")
	for _, n := range []string{"c0", "c1"} {
		e.waitHost(n, 60*time.Second, "available", stateIs(wire.StateAvailable, wire.OpOK))
	}
	h := e.host("c0")
	h.Image = &wire.Image{URL: origin.URL + "/os.iso", Checksum: good, ChecksumType: wire.ChecksumSHA256}
	e.apply(h)
	bad := e.host("c1")
	wrong := strings.Repeat("ab", 32)
	bad.Image = &wire.Image{URL: origin.URL + "/os.iso?v=2", Checksum: wrong}
	e.apply(bad)

	e.waitHost("c0", 60*time.Second, "provisioned", stateIs(wire.StateProvisioned, wire.OpOK))
	st, err := e.simState(0)
	if err != nil {
		t.Fatal(err)
	}
	want := "http://" + art + "/images/sha256-" + good + "/os.iso"
	if !st.Media.Inserted || st.Media.Image != want {
		t.Fatalf("BMC 0 media %+v, want %s inserted", st.Media, want)
	}
	resp, err := http.Get(want)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(got) != body {
		t.Fatalf("GET %s: %s, %d bytes", want, resp.Status, len(got))
	}

	if n := gets.Load(); n != 1 {
		t.Errorf("the origin served the good image %d times, want 1 (the BMC read the rack's copy)", n)
	}

	failed := e.waitHost("c1", 60*time.Second, "provisioning error", func(h *wire.Host) error {
		if h.Status == nil || h.Status.ErrorType != wire.ErrProvisioning {
			return fmt.Errorf("status %+v", h.Status)
		}
		return nil
	})
	if msg := failed.Status.ErrorMessage; !strings.Contains(msg, "image checksum mismatch") || !strings.Contains(msg, good) || !strings.Contains(msg, wrong) {
		t.Errorf("c1's error %q: want the mismatch with both digests", msg)
	}
	if st, _ := e.simState(1); st.Media.Inserted {
		t.Errorf("BMC 1 has media inserted after its image failed verification: %+v", st.Media)
	}
	if v := scrape(t, maddr, "rackfence_agent_image_cache_checksum_mismatches_total"); v < 1 {
		t.Errorf("checksum mismatches metric %v", v)
	}
	if v := scrape(t, maddr, "rackfence_agent_image_cache_bytes"); v != float64(len(body)) {
		t.Errorf("image cache bytes metric %v, want %d", v, len(body))
	}
	if v := scrape(t, maddr, `rackfence_agent_artifact_served_bytes_total{kind="image"}`); v < float64(len(body)) {
		t.Errorf("served image bytes metric %v", v)
	}
}
