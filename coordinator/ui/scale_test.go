package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
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
// chromium: first paint after a page load, and how long a change takes from
// the API call that makes it to its tile on screen. It is a measurement,
// not a check of timings: it prints the figures and fails only when the
// page does not show the fleet. Run it with
//
//	make build && RACKFENCE_BIN=$PWD/bin RACKFENCE_UI_SCALE=10000 \
//	  go test -run TestDashboardScale -v -timeout 30m ./coordinator/ui/
//
// (RACKFENCE_UI_RACK_SIZE, default 40 hosts per rack.) The hosts and their
// statuses go into a real coordinator through the API an agent uses (an
// admin may report status under a rack lease it holds): 10,000 simulated
// BMCs and 250 agents do not fit on the machines this runs on, and the
// dashboard sees only the coordinator. Leases are renewed in the background
// as agents would (each rack every 10 s), so the watch is busy meanwhile.
func TestDashboardScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("RACKFENCE_UI_SCALE"))
	if n <= 0 {
		t.Skip("set RACKFENCE_UI_SCALE=10000 to measure the dashboard at that many hosts (see the doc comment)")
	}
	perRack := 40
	if v, _ := strconv.Atoi(os.Getenv("RACKFENCE_UI_RACK_SIZE")); v > 0 {
		perRack = v
	}
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
	parallel(t, n, 32, func(i int) error {
		h := &wire.Host{Name: hostName(i), Rack: rackName(i / perRack), Online: true, Consumer: "tenant-" + strconv.Itoa(i%7),
			BMC:            wire.BMC{Address: fmt.Sprintf("redfish://10.%d.%d.%d/redfish/v1/Systems/1", i>>16&255, i>>8&255, i&255), Credentials: "bmc"},
			BootMACAddress: fmt.Sprintf("52:54:00:%02x:%02x:%02x", i>>16&255, i>>8&255, i&255),
			Image:          &wire.Image{URL: "http://images.example/ubuntu-24.04.qcow2", Checksum: "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}}
		if _, _, err := admin.ApplyHost(ctx, h); err != nil {
			return err
		}
		rep := wire.StatusReport{Epoch: leases[i/perRack].Epoch, Status: scaleStatus(i, leases[i/perRack].Epoch)}
		if i%97 == 5 { // a detached host, acknowledged as an agent would
			in, err := admin.Detach(ctx, h.Name, wire.IntentRequest{Reason: "scale fixture"})
			if err != nil {
				return err
			}
			rep.Status.OperationalStatus = wire.OpDetached
			rep.Acks = []wire.IntentAck{{Kind: wire.IntentDetach, CreatedIndex: in.CreatedIndex}}
		}
		return admin.ReportStatus(ctx, h.Name, rep)
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

	// What the page downloads first: the whole fleet at index 0.
	t0 := time.Now()
	req, _ := http.NewRequest("GET", c.URL+"/v1/watch?index=0", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	size, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	t.Logf("GET /v1/watch?index=0: %.1f MB in %s", float64(size)/1e6, time.Since(t0).Round(time.Millisecond))

	tab := b.tab(10 * time.Minute)
	if err := chromedp.Do(tab,
		chromedp.Navigate(c.URL+"/ui/"),
		chromedp.WaitVisible("#token"),
		chromedp.SendKeys("#token", tok),
		chromedp.Click("#login-btn"),
		chromedp.Poll[chromedp.Void](fmt.Sprintf(`window.rackfence.stats().hosts === %d && window.rackfence.stats().firstPaintMs !== null`, n),
			chromedp.WithPollingTimeout(2*time.Minute)),
	); err != nil {
		t.Fatalf("first load: %v\npage errors: %v", err, b.pageErrors())
	}

	// First paint: reload (the token stays in the tab) and read when the
	// first frame with the fleet drawn followed, from navigation start.
	type stats struct {
		Hosts        int      `json:"hosts"`
		Racks        int      `json:"racks"`
		FirstPaintMs *float64 `json:"firstPaintMs"`
		FirstLoad    struct {
			StartMs, TransferMs, ParseMs, RenderMs float64
			Bytes                                  int
		} `json:"firstLoad"`
		DOMNodes int    `json:"domNodes"`
		Canvases int    `json:"canvases"`
		Mode     string `json:"mode"`
	}
	var paints, starts, transfers, parses, renders []float64
	var last stats
	for range 7 {
		if err := chromedp.Do(tab, chromedp.Reload()); err != nil {
			t.Fatal(err)
		}
		raw, err := chromedp.Run(tab, chromedp.Poll[[]byte](fmt.Sprintf(
			`window.rackfence && window.rackfence.stats().hosts === %d && window.rackfence.stats().firstPaintMs !== null && window.rackfence.stats()`, n),
			chromedp.WithPollingTimeout(time.Minute), chromedp.WithPollingInterval(20*time.Millisecond)))
		if err != nil {
			t.Fatalf("reload: %v\npage errors: %v", err, b.pageErrors())
		}
		if err := json.Unmarshal(raw, &last); err != nil {
			t.Fatal(err)
		}
		paints = append(paints, *last.FirstPaintMs)
		fl := last.FirstLoad
		starts, transfers, parses, renders = append(starts, fl.StartMs), append(transfers, fl.TransferMs), append(parses, fl.ParseMs), append(renders, fl.RenderMs)
	}
	if last.Hosts != n || last.Racks != racks {
		t.Fatalf("the page shows %d hosts in %d racks, want %d in %d", last.Hosts, last.Racks, n, racks)
	}

	// Update latency: the page itself posts a detach (then attach) of a
	// host and waits until the frame after that host's tile was redrawn.
	// Hosts are picked from racks across the fleet; each is scrolled into
	// view first, since tiles off screen are not drawn.
	var lat, apiLat, recvLat []float64
	for k := range 30 {
		i := (k*7919 + 13) % n
		name := hostName(i)
		method := "POST"
		if k%2 == 1 {
			method = "DELETE"
			name = hostName(((k-1)*7919 + 13) % n)
		}
		raw, err := chromedp.Run(tab, chromedp.Evaluate[[]byte](fmt.Sprintf(`(async () => {
			const name = %q, method = %q;
			document.querySelector('.rack[data-rack="' + window.rackfence.tile(name).rack + '"]').scrollIntoView();
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
		t.Fatalf("the page reported errors: %q", errs)
	}
	if err := chromedp.Do(tab, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`), chromedp.Sleep(300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if shot, err := chromedp.Run(tab, chromedp.CaptureScreenshot()); err == nil {
		keepArtifact(t, fmt.Sprintf("dashboard-%d.png", n), shot)
	}
	fmt.Printf("dashboard at %d hosts in %d racks (%d lease renewals during the run)\n", n, racks, renewals.Load())
	fmt.Printf("  first paint after load (ms from navigation start, %d loads): median %.0f, max %.0f\n", len(paints), pct(paints, 50), pct(paints, 100))
	fmt.Printf("    of which (medians): page ready to request %.0f, fleet answer %.0f (%.1f MB), JSON.parse %.0f, first render %.0f\n",
		pct(starts, 50), pct(transfers, 50), float64(last.FirstLoad.Bytes)/1e6, pct(parses, 50), pct(renders, 50))
	fmt.Printf("  update: API call to tile on screen (ms, %d changes): median %.0f, p90 %.0f, max %.0f\n", len(lat), pct(lat, 50), pct(lat, 90), pct(lat, 100))
	fmt.Printf("    the API call alone (its answer to the page): median %.0f, p90 %.0f, max %.0f\n", pct(apiLat, 50), pct(apiLat, 90), pct(apiLat, 100))
	fmt.Printf("    the change in a watch answer at the page: median %.0f, p90 %.0f, max %.0f\n", pct(recvLat, 50), pct(recvLat, 90), pct(recvLat, 100))
	fmt.Printf("  DOM: %d element nodes, %d canvases (tiles: %s)\n", last.DOMNodes, last.Canvases, last.Mode)
}

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
