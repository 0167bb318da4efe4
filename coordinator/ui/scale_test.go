package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
)

// TestDashboardScale measures the dashboard at fleet size in real
// chromium and checks what must hold at that size: the page shows every
// host and rack with the right counts, a filter across all hosts finds
// exactly the hosts it should, and the page never reads whole hosts or
// the whole fleet at once to start (only rack counts, summary pages and
// the watch from the list's index). Timings are printed, not asserted:
// first paint after a page load (from the rack counts), all hosts loaded,
// a filter applied, and how long a change takes from the API call that
// makes it to its tile on screen.
//
// 10,000 hosts run in make test (not under -short); 100,000 only with
// RACKFENCE_UI_SCALE=100000 (make bench sets it), since filling them takes
// minutes here:
//
//	make build && RACKFENCE_BIN=$PWD/bin RACKFENCE_UI_SCALE=100000 \
//	  go test -run TestDashboardScale -v -timeout 60m ./coordinator/ui/
//
// (RACKFENCE_UI_RACK_SIZE, default 40 hosts per rack.) The hosts and their
// statuses go into a real coordinator through the API an agent uses (an
// admin may report status under a rack lease it holds): 10,000 simulated
// BMCs and 250 agents do not fit on the machines this runs on, and the
// dashboard sees only the coordinator. Leases are renewed in the background
// as agents would (each rack every 10 s), so the watch is busy meanwhile.
func TestDashboardScale(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator with 10,000 hosts and chromium: not under -short")
	}
	sizes := []int{10000}
	if n, _ := strconv.Atoi(os.Getenv("RACKFENCE_UI_SCALE")); n > 0 && n != 10000 {
		sizes = append(sizes, n)
	}
	perRack := 40
	if v, _ := strconv.Atoi(os.Getenv("RACKFENCE_UI_RACK_SIZE")); v > 0 {
		perRack = v
	}
	for _, n := range sizes {
		t.Run(strconv.Itoa(n), func(t *testing.T) { dashboardAtScale(t, n, perRack) })
	}
}

// dashboardAtScale is TestDashboardScale at n hosts, perRack a rack.
func dashboardAtScale(t *testing.T, n, perRack int) {
	racks := (n + perRack - 1) / perRack
	b := newBrowser(t, 1600, 1000)
	dir := t.TempDir()
	c := rig.StartCoordinator(t, dir, rig.CoordOpts{})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	admin := c.Admin
	tok, err := client.ReadTokenFile(filepath.Join(dir, "data", "admin.token"))
	if err != nil {
		t.Fatal(err)
	}

	rackName := func(i int) string { return fmt.Sprintf("rack-%03d", i) }
	hostName := func(i int) string { return fmt.Sprintf("%s-h%02d", rackName(i/perRack), i%perRack) }
	start := time.Now()
	leases := make([]wire.Lease, racks)
	parallel(t, racks, 16, func(i int) error {
		l, err := admin.AcquireLease(ctx, rackName(i), wire.LeaseRequest{Holder: "agent-" + rackName(i), TTL: wire.Duration(5 * time.Minute)})
		if err == nil {
			leases[i] = *l
		}
		return err
	})
	// Hosts are created one by one (an admin's PUT), their statuses
	// written as an agent does, one rack report per rack.
	parallel(t, n, 32, func(i int) error {
		h := &wire.Host{Name: hostName(i), Rack: rackName(i / perRack), Online: true, Consumer: "tenant-" + strconv.Itoa(i%7),
			BMC:            wire.BMC{Address: fmt.Sprintf("redfish://10.%d.%d.%d/redfish/v1/Systems/1", i>>16&255, i>>8&255, i&255), Credentials: "bmc"},
			BootMACAddress: fmt.Sprintf("52:54:00:%02x:%02x:%02x", i>>16&255, i>>8&255, i&255),
			Image:          &wire.Image{URL: "http://images.example/ubuntu-24.04.qcow2", Checksum: "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}}
		_, _, err := admin.ApplyHost(ctx, h)
		return err
	})
	parallel(t, racks, 8, func(r int) error {
		rep := wire.RackStatusReport{Epoch: leases[r].Epoch}
		for i := r * perRack; i < min(n, (r+1)*perRack); i++ {
			st := scaleStatus(i, leases[r].Epoch)
			hr := wire.RackHostReport{Name: hostName(i), Status: &st}
			if scaleDetached(i) { // a detached host, acknowledged as an agent would
				in, err := admin.Detach(ctx, hr.Name, wire.IntentRequest{Reason: "scale fixture"})
				if err != nil {
					return err
				}
				st.OperationalStatus = wire.OpDetached
				hr.Acks = []wire.IntentAck{{Kind: wire.IntentDetach, CreatedIndex: in.CreatedIndex}}
			}
			rep.Hosts = append(rep.Hosts, hr)
		}
		res, err := admin.ReportRackStatus(ctx, rackName(r), rep)
		if err != nil {
			return err
		}
		for _, h := range res.Hosts {
			if h.Error != nil {
				return fmt.Errorf("status of %s refused: %s", h.Name, h.Error.Message)
			}
		}
		return nil
	})
	t.Logf("loaded %d hosts in %d racks in %s", n, racks, time.Since(start).Round(time.Millisecond))

	// Renew every rack's lease every 10 s, spread out, as agents do.
	var renewals atomic.Int64
	go func() {
		tick := time.NewTicker(10 * time.Second / time.Duration(racks))
		defer tick.Stop()
		for i := 0; ; i = (i + 1) % racks {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if _, err := admin.RenewLease(ctx, rackName(i), wire.LeaseRequest{Holder: leases[i].Holder, Epoch: leases[i].Epoch}); err == nil {
				renewals.Add(1)
			}
		}
	}()

	want := scaleExpect(n)
	loaded := fmt.Sprintf(`window.rackfence && window.rackfence.stats().hosts === %d && window.rackfence.stats().firstPaintMs !== null && (window.rackfence.stats().loadedMs === undefined || window.rackfence.stats().loadedMs !== null)`, n)
	tab := b.tab(20 * time.Minute)
	if err := chromedp.Do(tab,
		chromedp.Navigate(c.URL+"/ui/"),
		chromedp.WaitVisible("#token"),
		chromedp.SendKeys("#token", tok),
		chromedp.Click("#login-btn"),
		chromedp.Poll[chromedp.Void](loaded, chromedp.WithPollingTimeout(5*time.Minute)),
	); err != nil {
		t.Fatalf("first load: %v\npage errors: %v", err, b.pageErrors())
	}

	// First paint: reload (the token stays in the tab) and read when the
	// first frame with the fleet drawn followed, from navigation start.
	type stats struct {
		Hosts        int      `json:"hosts"`
		Racks        int      `json:"racks"`
		FirstPaintMs *float64 `json:"firstPaintMs"`
		LoadedMs     *float64 `json:"loadedMs"`
		Pages        int      `json:"pages"`
		FirstLoad    *struct {
			StartMs, TransferMs, ParseMs, RenderMs float64
			Bytes                                  int
		} `json:"firstLoad"`
		Totals *struct {
			Error, Detached int
		} `json:"totals"`
		DOMNodes int     `json:"domNodes"`
		Canvases int     `json:"canvases"`
		Mode     string  `json:"mode"`
		HeapMB   float64 `json:"heapMB"`
	}
	var paints, loads []float64
	var last stats
	for range 3 {
		if err := chromedp.Do(tab, chromedp.Reload()); err != nil {
			t.Fatal(err)
		}
		raw, err := chromedp.Run(tab, chromedp.Poll[[]byte](loaded+` && Object.assign(window.rackfence.stats(), {heapMB: performance.memory ? performance.memory.usedJSHeapSize / 1e6 : 0})`,
			chromedp.WithPollingTimeout(5*time.Minute), chromedp.WithPollingInterval(20*time.Millisecond)))
		if err != nil {
			t.Fatalf("reload: %v\npage errors: %v", err, b.pageErrors())
		}
		if err := json.Unmarshal(raw, &last); err != nil {
			t.Fatal(err)
		}
		paints = append(paints, *last.FirstPaintMs)
		if last.LoadedMs != nil {
			loads = append(loads, *last.LoadedMs)
		} else { // a page that paints only once it has everything
			loads = append(loads, *last.FirstPaintMs)
		}
	}
	if last.Hosts != n || last.Racks != racks {
		t.Errorf("the page shows %d hosts in %d racks, want %d in %d", last.Hosts, last.Racks, n, racks)
	}
	if last.Totals == nil || last.Totals.Error != want.inError || last.Totals.Detached != want.detached {
		t.Errorf("the page counts %+v hosts in error/detached, want %d in error and %d detached", last.Totals, want.inError, want.detached)
	}
	// Only the racks near the viewport have a section: a 1600×1000 window
	// (plus the page's 400 px margins) holds fewer than 200 racks of any
	// size, whatever the fleet's.
	if maxCanvases := 200; last.Canvases > maxCanvases {
		t.Errorf("the page holds %d rack canvases for %d racks (at most %d fit near a 1600×1000 window): it builds racks off screen", last.Canvases, racks, maxCanvases)
	}
	// What the last load asked for: never the whole fleet (watch index 0)
	// nor a whole host; hosts only as summaries.
	var urls []string
	raw, err := chromedp.Run(tab, chromedp.Evaluate[[]byte](`performance.getEntriesByType('resource').map((e) => e.name)`))
	if err == nil {
		err = json.Unmarshal(raw, &urls)
	}
	if err != nil {
		t.Fatal(err)
	}
	summaries := 0
	for _, u := range urls {
		switch {
		case strings.Contains(u, "/v1/watch") && strings.Contains(u, "index=0&"):
			t.Errorf("the page asked for the whole fleet: %s", u)
		case strings.Contains(u, "/v1/hosts/"):
			t.Errorf("the page read a whole host while loading: %s", u)
		case strings.Contains(u, "/v1/hosts"):
			if !strings.Contains(u, "view=summary") {
				t.Errorf("the page listed whole hosts: %s", u)
			}
			summaries++
		}
	}
	if summaries == 0 {
		t.Errorf("the page read no host summaries; it asked for %q", urls)
	}

	// A filter across all hosts: typed as a user would, timed from the
	// input event to the frame after the tiles were redrawn with it (the
	// page waits 120 ms for typing to pause first).
	var filterMs []float64
	for k := range 3 {
		f := []string{"error", "", "error"}[k]
		raw, err := chromedp.Run(tab, chromedp.Evaluate[[]byte](fmt.Sprintf(`(async () => {
			const f = document.getElementById('filter'), want = %q, r0 = window.rackfence.stats().renders;
			const t0 = performance.now();
			f.value = want; f.dispatchEvent(new Event('input'));
			for (;;) {
				const s = window.rackfence.stats();
				if (s.filter === want || (s.filter === undefined && s.renders !== r0)) break;
				if (performance.now() - t0 > 60000) return {error: 'filter not applied within 60s'};
				await new Promise((r) => setTimeout(r, 2));
			}
			await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
			return {ms: performance.now() - t0, matching: window.rackfence.stats().matching};
		})()`, f), chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			MS       float64 `json:"ms"`
			Matching *int    `json:"matching"`
			Error    string  `json:"error"`
		}
		if err := json.Unmarshal(raw, &out); err != nil || out.Error != "" {
			t.Fatalf("filter %q: %v %s", f, err, out.Error)
		}
		if f == "" {
			continue
		}
		filterMs = append(filterMs, out.MS)
		if out.Matching == nil || *out.Matching != want.matchError {
			t.Errorf("filter %q matches %v hosts on the page, want %d", f, out.Matching, want.matchError)
		}
	}
	if err := chromedp.Do(tab, chromedp.Evaluate[chromedp.Void](`document.getElementById('filter').value = ''; document.getElementById('filter').dispatchEvent(new Event('input'))`),
		chromedp.Sleep(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}

	// Update latency: the page itself posts a detach (then attach) of a
	// host and waits until the frame after that host's tile was redrawn.
	// Hosts are picked from racks across the fleet; each is scrolled into
	// view first, since racks off screen have no section and are not drawn.
	var lat, apiLat, recvLat []float64
	for k := range 10 {
		i := (k*7919 + 13) % n
		name := hostName(i)
		method := "POST"
		if k%2 == 1 {
			method = "DELETE"
			name = hostName(((k-1)*7919 + 13) % n)
		}
		raw, err := chromedp.Run(tab, chromedp.Evaluate[[]byte](fmt.Sprintf(`(async () => {
			const name = %q, method = %q;
			window.rackfence.scrollToRack(window.rackfence.tile(name).rack);
			await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
			const before = window.rackfence.drawnAt(name);
			const t0 = performance.now();
			const r = await fetch('/v1/hosts/' + name + '/intents/detach', {method, headers: {
				'Authorization': 'Bearer ' + sessionStorage.getItem('rackfence.token'), 'Content-Type': 'application/json'},
				body: method === 'POST' ? '{"reason":"scale"}' : undefined});
			if (!r.ok) return {error: r.status + ' ' + await r.text()};
			const answered = performance.now() - t0;
			const want = method === 'POST';
			for (let seen = before;;) {
				const d = window.rackfence.drawnAt(name);
				if (d !== null && d !== seen && d > t0) { // redrawn since the call: with the change?
					seen = d;
					const x = window.rackfence.tile(name);
					if (!!(x.intents && x.intents.detach) === want && x.drawn) return {ms: d - t0, api: answered, recv: window.rackfence.receivedAt(name) - t0};
				}
				if (performance.now() - t0 > 30000) return {error: 'not redrawn within 30s'};
				await new Promise(r => setTimeout(r, 5));
			}
		})()`, name, method), chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			MS    float64 `json:"ms"`
			API   float64 `json:"api"`
			Recv  float64 `json:"recv"`
			Error string  `json:"error"`
		}
		if err := json.Unmarshal(raw, &out); err != nil || out.Error != "" {
			t.Fatalf("update of %s: %v %s", name, err, out.Error)
		}
		lat, apiLat, recvLat = append(lat, out.MS), append(apiLat, out.API), append(recvLat, out.Recv)
	}
	if errs := b.pageErrors(); len(errs) > 0 {
		t.Errorf("the page reported errors: %q", errs)
	}
	if err := chromedp.Do(tab, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`), chromedp.Sleep(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if shot, err := chromedp.Run(tab, chromedp.CaptureScreenshot()); err == nil {
		keepArtifact(t, fmt.Sprintf("dashboard-%d.png", n), shot)
	}
	t.Logf("dashboard at %d hosts in %d racks (%d lease renewals during the run)", n, racks, renewals.Load())
	t.Logf("  first paint after load (ms from navigation start, %d loads): median %.0f, max %.0f", len(paints), pct(paints, 50), pct(paints, 100))
	if fl := last.FirstLoad; fl != nil {
		t.Logf("    of which (last load): page ready to ask %.0f, first answer (rack counts) %.0f ms for %.0f kB, JSON.parse %.0f, first render %.0f",
			fl.StartMs, fl.TransferMs, float64(fl.Bytes)/1e3, fl.ParseMs, fl.RenderMs)
	}
	t.Logf("  all hosts loaded and drawn (ms from navigation start): median %.0f, max %.0f (%d summary pages)", pct(loads, 50), pct(loads, 100), last.Pages)
	t.Logf("  filter %q across all hosts, input to frame (ms, incl. 120 ms debounce): median %.0f, max %.0f", "error", pct(filterMs, 50), pct(filterMs, 100))
	t.Logf("  update: API call to tile on screen (ms, %d changes): median %.0f, p90 %.0f, max %.0f", len(lat), pct(lat, 50), pct(lat, 90), pct(lat, 100))
	t.Logf("    the API call alone (its answer to the page): median %.0f, p90 %.0f, max %.0f", pct(apiLat, 50), pct(apiLat, 90), pct(apiLat, 100))
	t.Logf("    the change in a watch answer at the page: median %.0f, p90 %.0f, max %.0f", pct(recvLat, 50), pct(recvLat, 90), pct(recvLat, 100))
	t.Logf("  DOM: %d element nodes, %d canvases (tiles: %s); JS heap in use %.0f MB", last.DOMNodes, last.Canvases, last.Mode, last.HeapMB)
	fmt.Printf("figures: dashboard hosts=%d first_paint_ms=%.0f loaded_ms=%.0f filter_ms=%.0f update_ms=%.0f js_heap_mb=%.0f\n",
		n, pct(paints, 50), pct(loads, 50), pct(filterMs, 50), pct(lat, 50), last.HeapMB)
}

// scaleFixture is what the page must show of the hosts scaleStatus and
// scaleDetached make.
type scaleFixture struct {
	inError, detached int
	matchError        int // hosts the filter "error" matches (status or error type)
}

func scaleExpect(n int) scaleFixture {
	var f scaleFixture
	for i := range n {
		st := scaleStatus(i, 1)
		switch {
		case scaleDetached(i):
			f.detached++
		case st.OperationalStatus == wire.OpError:
			f.inError++
		}
		if st.ErrorType != "" || (st.OperationalStatus == wire.OpError && !scaleDetached(i)) {
			f.matchError++
		}
	}
	return f
}

// scaleDetached is whether fixture host i is detached.
func scaleDetached(i int) bool { return i%97 == 5 }

func parallel(t *testing.T, n, workers int, f func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	var next atomic.Int64
	var mu sync.Mutex
	var first error
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("item %d: %w", i, err)
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		t.Fatal(first)
	}
}

// scaleStatus is a plausible agent report: most hosts provisioned, some
// available, a few in error, with an inventory of the usual size.
func scaleStatus(i int, epoch uint64) wire.HostStatus {
	s := wire.HostStatus{ProvisioningState: wire.StateProvisioned, OperationalStatus: wire.OpOK, PoweredOn: true,
		LastUpdated: time.Now().UTC(), Epoch: epoch, ProvisioningID: fmt.Sprintf("%08x", i*2654435761),
		HardwareDetails: &wire.HardwareDetails{Manufacturer: "Contoso", Model: "R650", SerialNumber: fmt.Sprintf("SN%07d", i),
			BIOSVersion: "2.19.1", MemoryMiB: 524288,
			CPUs:     []wire.CPU{{Model: "Xeon Gold 6338", Cores: 32, Threads: 64}, {Model: "Xeon Gold 6338", Cores: 32, Threads: 64}},
			NICs:     []wire.NIC{{Name: "eno1", MAC: fmt.Sprintf("52:54:01:%02x:%02x:%02x", i>>16&255, i>>8&255, i&255), SpeedMbps: 25000}, {Name: "eno2", MAC: fmt.Sprintf("52:54:02:%02x:%02x:%02x", i>>16&255, i>>8&255, i&255), SpeedMbps: 25000}},
			Disks:    []wire.Disk{{Name: "sda", Model: "PM1733", SizeBytes: 3840755982336, Type: "NVMe"}, {Name: "sdb", Model: "PM1733", SizeBytes: 3840755982336, Type: "NVMe"}},
			Firmware: []wire.Firmware{{Name: "BMC", Version: "7.00.00"}, {Name: "BIOS", Version: "2.19.1"}}}}
	switch {
	case i%10 == 3:
		s.ProvisioningState = wire.StateAvailable
	case i%211 == 7:
		s.OperationalStatus, s.ErrorType, s.ErrorMessage, s.ErrorCount = wire.OpError, wire.ErrPowerManagement, "BMC answered 500 to a power-on", 3
	}
	return s
}

func pct(v []float64, p int) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	i := (len(s)*p + 99) / 100
	if i > 0 {
		i--
	}
	return s[i]
}
