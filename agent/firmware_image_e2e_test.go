package agent_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/procstat"
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
	// RACKFENCE_FW_HOSTS=100 gives the rack-of-100 figures (see the log);
	// RACKFENCE_FW_COMPONENT=bios flashes the BIOS (System ROM) instead of
	// the BMC:
	//
	//	make build && RACKFENCE_BIN=$PWD/bin RACKFENCE_FW_HOSTS=100 RACKFENCE_FW_COMPONENT=bios \
	//	  go test -count=1 -v -run TestFirmwareImageFromRackCache ./agent/ | grep figures
	hosts := envCount("RACKFENCE_FW_HOSTS", 3)
	component, item, image := wire.ComponentBMC, "iLO 5", "ilo5_310"
	if os.Getenv("RACKFENCE_FW_COMPONENT") == wire.ComponentBIOS {
		component, item, image = wire.ComponentBIOS, "System ROM", "U46_2.10"
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
		http.ServeContent(w, r, path.Base(r.URL.Path), time.Unix(0, 0), strings.NewReader(body))
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
	same.Firmware = []wire.FirmwareComponent{{Component: component, URL: origin.URL + "/fw/" + image + ".bin"}}
	e.apply(same)
	art := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, "127.0.0.1"))
	for i := 0; i <= hosts; i++ {
		h := e.hostSpec(fmt.Sprintf("fw%d", i), "r1", i)
		c := wire.FirmwareComponent{Component: component, URL: origin.URL + "/fw/" + image + ".bin", Checksum: good}
		if i == hosts {
			c.URL, c.Checksum = origin.URL+"/fw/bad/"+image+".bin", "sha256:"+strings.Repeat("ab", 32)
		}
		h.Firmware = []wire.FirmwareComponent{c}
		e.apply(h)
	}
	start := time.Now()
	agent := e.startAgent("r1", "a1", "--poll-interval", "1s", "--artifact-addr", art,
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
	agentCPU := procstat.CPUSeconds(agent.Cmd.Process.Pid)
	failed := e.waitHost(fmt.Sprintf("fw%d", hosts), 120*time.Second, "preparation error", func(h *wire.Host) error {
		if h.Status == nil || h.Status.ErrorType != wire.ErrPreparation {
			return fmt.Errorf("status %+v", h.Status)
		}
		return nil
	})
	for _, want := range []string{"firmware[0] (component " + component + ")", origin.URL + "/fw/bad/" + image + ".bin", "expected sha256:" + strings.Repeat("ab", 32), "got " + good, "nothing was sent to the BMC"} {
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

	prefix := "http://" + art + "/images/" + strings.Replace(good, ":", "-", 1) + "/" + image + ".bin"
	requests, redfish := 0, 0
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
		redfish += st.Requests
		for _, f := range st.Firmware {
			if f.Name == item && f.Version != image {
				t.Errorf("BMC %d: %s at %q, want %s", i, item, f.Version, image)
			}
		}
	}
	// The bad image is fetched too (again at each retry of its host) to
	// find that it does not match; the good one once for every host.
	if n := goodGets.Load(); n != 1 {
		t.Errorf("the origin served the good image %d times for %d hosts, want once", n, hosts)
	}
	t.Logf("figures: %d hosts' %s updated in %s; origin sent %d bytes in %d GETs, %d of the good image (image %d bytes; %d hosts each fetching it would be %d); %.1f Redfish requests per updated host (%.1f audited, mutating, per BMC); agent CPU %.1f ms per host (%.2f s in all, its start included)",
		hosts, component, wall.Round(time.Millisecond), sent.Load(), gets.Load(), goodGets.Load(), len(body), hosts, hosts*len(body),
		float64(redfish)/float64(hosts), float64(requests)/float64(hosts+1), agentCPU*1000/float64(hosts+2), agentCPU)
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
