package agent_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestFirmwareImageFromRackCache: rackfence-agent with an image cache
// gives each BMC the rack's verified copy of a firmware image (the
// origin fetched once for all hosts), updates components whose spec has
// no version (metal3's HostFirmwareComponents) until they show a version
// other than the one before, and fails a host whose image does not match
// its checksum before its BMC is sent anything, naming the component, the
// image, the expected and the actual digest.
func TestFirmwareImageFromRackCache(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator, bmcsim and an agent")
	}
	// RACKFENCE_FW_HOSTS=100 gives the rack-of-100 figures (see the log).
	hosts := 3
	if v, err := strconv.Atoi(os.Getenv("RACKFENCE_FW_HOSTS")); err == nil && v > 0 {
		hosts = v
	}
	body := strings.Repeat("iLO 5 firmware 3.10 ", 1<<15)
	sum := sha256.Sum256([]byte(body))
	good := "sha256:" + hex.EncodeToString(sum[:])
	var gets, goodGets, sent atomic.Int64
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		if !strings.Contains(r.URL.Path, "/bad/") {
			goodGets.Add(1)
		}
		sent.Add(int64(len(body)))
		http.ServeContent(w, r, "ilo5_310.bin", time.Unix(0, 0), strings.NewReader(body))
	}))
	defer origin.Close()

	e := newEnv(t, envOpts{bmcs: hosts + 2, simArgs: []string{"--profile", "ilo"}})
	for i := 0; i <= hosts; i++ {
		putKnobsAt(t, e, i, `{"speed": 60, "updateMinutes": 1}`) // a 1 s flash
	}
	// One more BMC reports success and keeps the old version: without a
	// version in the spec that is a failure, never a silent available.
	putKnobsAt(t, e, hosts+1, `{"speed": 60, "updateMinutes": 1, "updateOutcome": "no-change"}`)
	same := e.hostSpec("fw-same", "r1", hosts+1)
	same.Firmware = []wire.FirmwareComponent{{Component: wire.ComponentBMC, URL: origin.URL + "/fw/ilo5_310.bin"}}
	e.apply(same)
	art := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, "127.0.0.1"))
	for i := 0; i <= hosts; i++ {
		h := e.hostSpec(fmt.Sprintf("fw%d", i), "r1", i)
		c := wire.FirmwareComponent{Component: wire.ComponentBMC, URL: origin.URL + "/fw/ilo5_310.bin", Checksum: good}
		if i == hosts {
			c.URL, c.Checksum = origin.URL+"/fw/bad/ilo5_310.bin", "sha256:"+strings.Repeat("ab", 32)
		}
		h.Firmware = []wire.FirmwareComponent{c}
		e.apply(h)
	}
	start := time.Now()
	e.startAgent("r1", "a1", "--poll-interval", "1s", "--artifact-addr", art,
		"--image-cache-dir", filepath.Join(e.dir, "imagecache"), "--image-cache-size", "64MiB")

	for i := 0; i < hosts; i++ {
		e.waitHost(fmt.Sprintf("fw%d", i), 300*time.Second, "firmware updated, available", func(h *wire.Host) error {
			if h.Task != nil || h.Status == nil || h.Status.ProvisioningState != wire.StateAvailable || h.Status.ErrorType != "" || h.Status.Extra["firmware"] == "" {
				return fmt.Errorf("task %+v status %+v", h.Task, h.Status)
			}
			return nil
		})
	}
	wall := time.Since(start)
	failed := e.waitHost(fmt.Sprintf("fw%d", hosts), 120*time.Second, "preparation error", func(h *wire.Host) error {
		if h.Status == nil || h.Status.ErrorType != wire.ErrPreparation {
			return fmt.Errorf("status %+v", h.Status)
		}
		return nil
	})
	for _, want := range []string{"firmware[0] (component bmc)", origin.URL + "/fw/bad/ilo5_310.bin", "expected sha256:" + strings.Repeat("ab", 32), "got " + good, "nothing was sent to the BMC"} {
		if !strings.Contains(failed.Status.ErrorMessage, want) {
			t.Errorf("mismatch error lacks %q: %s", want, failed.Status.ErrorMessage)
		}
	}

	stuck := e.waitHost("fw-same", 120*time.Second, "preparation error", func(h *wire.Host) error {
		if h.Status == nil || h.Status.ErrorType != wire.ErrPreparation {
			return fmt.Errorf("status %+v", h.Status)
		}
		return nil
	})
	if !strings.Contains(stuck.Status.ErrorMessage, "still shows version") {
		t.Errorf("a flash that kept the old version: %s", stuck.Status.ErrorMessage)
	}

	prefix := "http://" + art + "/images/" + strings.Replace(good, ":", "-", 1) + "/ilo5_310.bin"
	requests := 0
	for i := 0; i <= hosts; i++ {
		updates := 0
		for _, l := range e.auditLines(i) {
			requests++
			if !strings.Contains(l.Path, "UpdateService") || l.Method != http.MethodPost {
				continue
			}
			updates++
			if !strings.Contains(l.Body, prefix) {
				t.Errorf("BMC %d was given %s, want the rack's verified copy %s", i, l.Body, prefix)
			}
		}
		want := 1
		if i == hosts {
			want = 0 // the mismatch: nothing sent
		}
		if updates != want {
			t.Errorf("BMC %d: %d updates started, want %d", i, updates, want)
		}
		if i == hosts {
			continue
		}
		st, err := e.simState(i)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range st.Firmware {
			if f.Name == "iLO 5" && f.Version != "ilo5_310" {
				t.Errorf("BMC %d: iLO 5 at %q, want ilo5_310", i, f.Version)
			}
		}
	}
	// The bad image is fetched too (again at each retry of its host) to
	// find that it does not match; the good one once for every host.
	if n := goodGets.Load(); n != 1 {
		t.Errorf("the origin served the good image %d times for %d hosts, want once", n, hosts)
	}
	t.Logf("figures: %d hosts updated in %s; origin sent %d bytes in %d GETs, %d of the good image (image %d bytes; %d hosts each fetching it would be %d); %.1f audited (mutating) BMC requests per host",
		hosts, wall.Round(time.Millisecond), sent.Load(), gets.Load(), goodGets.Load(), len(body), hosts, hosts*len(body), float64(requests)/float64(hosts+1))
}

// putKnobsAt sets the knobs of BMC i (each BMC has its own).
func putKnobsAt(t *testing.T, e *env, i int, body string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, fmt.Sprintf("http://127.0.0.1:%d/sim/knobs", e.s.Base+i), strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT /sim/knobs of BMC %d: %s", i, resp.Status)
	}
}
