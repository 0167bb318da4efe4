package ui_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
)

// TestDashboardListOutlivesView: when the coordinator answers a page of
// the host list 410 list_expired, the dashboard goes on after the last
// host it read (after=), in a new list, rather than reading the list
// again from its first page. The page's fetch is wrapped so pages hold 2
// hosts and the first continue is answered 410.
func TestDashboardListOutlivesView(t *testing.T) {
	b := newBrowser(t, 1200, 800)
	c := rig.StartCoordinator(t, t.TempDir(), rig.CoordOpts{})
	for i := range 6 {
		c.Apply(&wire.Host{Name: fmt.Sprintf("r1-h%d", i), Rack: "r1", Online: true,
			BMC: wire.BMC{Address: "redfish+http://127.0.0.1:9/redfish/v1/Systems/1", Credentials: "bmc"}})
	}
	tok := readToken(t, c.Token(wire.RoleViewer, "", "viewer.token"))
	ctx := b.tab(2 * time.Minute)
	const wrap = `(() => {
		window.lists = [];
		const real = window.fetch;
		let failed = false;
		window.fetch = (path, opt) => {
			if (typeof path === 'string' && path.startsWith('/v1/hosts?')) {
				path = path.replace(/limit=\d+/, 'limit=2');
				window.lists.push(path);
				if (!failed && path.includes('continue=')) {
					failed = true;
					return Promise.resolve(new Response(JSON.stringify({error: {code: 'list_expired', message: 'expired by the test'}}), {status: 410}));
				}
			}
			return real(path, opt);
		};
		return true;
	})()`
	if err := chromedp.Do(ctx, chromedp.Navigate(c.URL+"/ui/"), chromedp.WaitVisible("#token")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](wrap)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys("#token", tok), chromedp.Click("#login-btn")); err != nil {
		t.Fatal(err)
	}
	expr := `window.rackfence.stats().loaded === true && window.rackfence.stats().hosts === 6`
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(60*time.Second), chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
		t.Fatalf("every host loaded: %v\npage errors: %v", err, b.pageErrors())
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](`window.lists`))
	var lists []string
	if err == nil {
		err = json.Unmarshal(raw, &lists)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(lists) < 4 || !strings.Contains(lists[1], "continue=") {
		t.Fatalf("host list requests %q", lists)
	}
	if !strings.Contains(lists[2], "after=r1-h1") || strings.Contains(lists[2], "continue=") {
		t.Fatalf("after the 410 the page asked %q: want after=r1-h1, the last host read (requests %q)", lists[2], lists)
	}
	for _, u := range lists[3:] {
		if !strings.Contains(u, "continue=") {
			t.Fatalf("after the restart the page asked %q: want the new list's continue (requests %q)", u, lists)
		}
	}
}
