package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

type box struct{ X, Y, W, H float64 }

func (a box) overlaps(b box) bool {
	return a.W > 0 && b.W > 0 && a.X < b.X+b.W && b.X < a.X+a.W && a.Y < b.Y+b.H && b.Y < a.Y+a.H
}

// TestDashboardLayout opens a host's panel at 1,440 and 1,920 px: the
// legend (and the toolbar) stay beside the panel, never under it; the
// panel of a detached host offers no Reboot or Inspect (the API refuses
// both for it) and an available host's does.
func TestDashboardLayout(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator and chromium")
	}
	b := newBrowser(t, 1440, 900)
	dir := t.TempDir()
	c := rig.StartCoordinator(t, dir, rig.CoordOpts{})
	for _, n := range []string{"r1-h1", "r1-h2"} {
		c.Apply(&wire.Host{Name: n, Rack: "r1", Online: true})
	}
	if _, err := c.Admin.Detach(rig.Ctx(t), "r1-h2", wire.IntentRequest{Reason: "layout test"}); err != nil {
		t.Fatal(err)
	}
	tok := readToken(t, c.Token(wire.RoleOperator, "", "operator.token"))
	ctx := b.tab(2 * time.Minute)
	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v\npage errors: %v", what, err, b.pageErrors())
		}
	}
	eval := func(expr string, out any) {
		t.Helper()
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s: %v (%s)", expr, err, raw)
		}
	}
	rect := func(sel string) box {
		var r box
		eval(fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return {X: r.x, Y: r.y, W: r.width, H: r.height}; })()`, sel), &r)
		return r
	}
	actions := func() []string {
		var a []string
		eval(`[...document.querySelectorAll('#panel .actions button[data-action]')].map(b => b.dataset.action)`, &a)
		return a
	}
	step("sign in",
		chromedp.Navigate(c.URL+"/ui/"),
		chromedp.WaitVisible("#token"),
		chromedp.SendKeys("#token", tok),
		chromedp.Click("#login-btn"),
		chromedp.Poll[chromedp.Void](`window.rackfence.stats().hosts === 2`, chromedp.WithPollingTimeout(30*time.Second)),
	)
	for _, width := range []int{1440, 1920} {
		step(fmt.Sprintf("open r1-h2 at %d px", width),
			chromedp.EmulateViewport(int64(width), 900),
			chromedp.SendKeys("#filter", "r1-h2\r"),
			chromedp.WaitVisible(`#panel button[data-action="attach"]`),
		)
		panel := rect("#panel")
		for _, sel := range []string{"#legend", "#toolbar"} {
			if r := rect(sel); r.overlaps(panel) {
				t.Errorf("at %d px %s %+v lies under the host panel %+v", width, sel, r, panel)
			}
		}
		if a := actions(); contains(a, "reboot") || contains(a, "inspect") {
			t.Errorf("at %d px the detached host's panel offers %q; the API refuses reboot and inspect for it", width, a)
		}
		if width == 1440 {
			var shot []byte
			step("screenshot", chromedp.Func(func(ctx2 context.Context, tg *chromedp.Target) error {
				var err error
				shot, err = chromedp.CaptureScreenshot()(ctx2, tg)
				return err
			}))
			keepArtifact(t, "layout-1440.png", shot)
		}
		step("clear the filter", chromedp.Evaluate[chromedp.Void](`document.getElementById('filter').value = ''`))
	}
	// An available host (reported by a rack agent) offers both.
	reportAvailable(t, c, "r1", "r1-h1")
	step("open r1-h1",
		chromedp.SendKeys("#filter", "r1-h1\r"),
		chromedp.Poll[chromedp.Void](`!!document.querySelector('#panel button[data-action="inspect"]')`, chromedp.WithPollingTimeout(30*time.Second)),
	)
	if a := actions(); !contains(a, "reboot") || !contains(a, "inspect") {
		t.Errorf("an available host's panel offers %q; want reboot and inspect", a)
	}
	if e := b.pageErrors(); len(e) > 0 {
		t.Errorf("page errors: %v", e)
	}
}

// reportAvailable reports host available as the rack's lease holder would.
func reportAvailable(t *testing.T, c *rig.Coordinator, rack, host string) {
	t.Helper()
	ctx := rig.Ctx(t)
	tok, err := c.Admin.CreateToken(ctx, wire.TokenRequest{Role: wire.RoleAgent, Rack: rack})
	if err != nil {
		t.Fatal(err)
	}
	cl, _, err := testenv.AgentClient(ctx, client.Config{Coordinator: c.URL, Token: tok.Token}, "agent-"+rack+"-layout")
	if err != nil {
		t.Fatal(err)
	}
	l, err := cl.AcquireLease(ctx, rack, wire.LeaseRequest{Holder: "agent-" + rack + "-layout", TTL: wire.Duration(5 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.ReportStatus(ctx, host, wire.StatusReport{Epoch: l.Epoch,
		Status: wire.HostStatus{ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpOK}}); err != nil {
		t.Fatal(err)
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// The tile fills of the steady states (available, provisioned,
// externally-provisioned) are told apart at a glance: every pair is at
// least 25 apart in CIELAB (ΔE76), and no other state is within 12 of one.
func TestDashboardStateColoursDistinct(t *testing.T) {
	src, err := os.ReadFile("static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)const PROV_COLOR = \{(.*?)\};`).FindSubmatch(src)
	if block == nil {
		t.Fatal("no PROV_COLOR in static/app.js")
	}
	colours := map[string][3]float64{}
	for _, m := range regexp.MustCompile(`'([a-z-]*)': '#([0-9a-f]{6})'`).FindAllSubmatch(block[1], -1) {
		colours[string(m[1])] = lab(string(m[2]))
	}
	steady := []string{wire.StateAvailable, wire.StateProvisioned, wire.StateExternallyProvisioned}
	for i, a := range steady {
		for _, b := range steady[i+1:] {
			if d := deltaE(colours[a], colours[b]); d < 25 {
				t.Errorf("%s and %s are %.1f apart (ΔE76); want at least 25", a, b, d)
			}
		}
		for b, cb := range colours {
			if b != a && !contains(steady, b) {
				if d := deltaE(colours[a], cb); d < 12 {
					t.Errorf("%s and %s are %.1f apart (ΔE76); want at least 12", a, b, d)
				}
			}
		}
	}
}

// lab converts an sRGB hex colour to CIELAB (D65).
func lab(hex string) [3]float64 {
	var rgb [3]float64
	for i := range rgb {
		v, _ := strconv.ParseUint(hex[2*i:2*i+2], 16, 8)
		c := float64(v) / 255
		if c <= 0.04045 {
			c /= 12.92
		} else {
			c = math.Pow((c+0.055)/1.055, 2.4)
		}
		rgb[i] = c
	}
	x := (0.4124*rgb[0] + 0.3576*rgb[1] + 0.1805*rgb[2]) / 0.95047
	y := 0.2126*rgb[0] + 0.7152*rgb[1] + 0.0722*rgb[2]
	z := (0.0193*rgb[0] + 0.1192*rgb[1] + 0.9505*rgb[2]) / 1.08883
	f := func(t float64) float64 {
		if t > 0.008856 {
			return math.Cbrt(t)
		}
		return 7.787*t + 16.0/116
	}
	return [3]float64{116*f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))}
}

func deltaE(a, b [3]float64) float64 {
	return math.Sqrt((a[0]-b[0])*(a[0]-b[0]) + (a[1]-b[1])*(a[1]-b[1]) + (a[2]-b[2])*(a[2]-b[2]))
}
