package ui_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/rackfence/rackfence/shared/client"
)

// TestDemoScreenshot photographs the dashboard of a running coordinator,
// signed in: `make screenshot` runs it (see the Makefile). For the
// README's docs/dashboard.png, from a running `make demo`:
//
//	DEMO_DURATION=300 make demo &        # wait until the hosts settle, then:
//	source .demo/env
//	rackfencectl detach r1-h01 --reason "hand over" --wait
//	rackfencectl drain r1-h07 --mode maintenance --wait
//	make screenshot HOST=r1-h01 OUT=docs/dashboard.png WIDTH=1440 HEIGHT=860
//
// The token is typed into the sign-in form, as a person would: it is kept
// in the tab's sessionStorage and never appears in a URL.
func TestDemoScreenshot(t *testing.T) {
	url, tokFile, out := os.Getenv("RACKFENCE_UI_DEMO_URL"), os.Getenv("RACKFENCE_UI_DEMO_TOKEN_FILE"), os.Getenv("RACKFENCE_UI_DEMO_SHOT")
	if url == "" || tokFile == "" || out == "" {
		t.Skip("set RACKFENCE_UI_DEMO_URL, RACKFENCE_UI_DEMO_TOKEN_FILE and RACKFENCE_UI_DEMO_SHOT (make screenshot does) to photograph a running coordinator")
	}
	url, _, _ = strings.Cut(url, ",") // RACKFENCE_COORDINATOR may list every member
	tok, err := client.ReadTokenFile(tokFile)
	if err != nil {
		t.Fatal(err)
	}
	width, height := 1440, 860
	if s := os.Getenv("RACKFENCE_UI_DEMO_SIZE"); s != "" {
		if _, err := fmt.Sscanf(s, "%dx%d", &width, &height); err != nil || width < 320 || height < 240 {
			t.Fatalf("RACKFENCE_UI_DEMO_SIZE %q: want WIDTHxHEIGHT, at least 320x240", s)
		}
	}
	b := newBrowser(t, width, height)
	ctx := b.tab(2 * time.Minute)
	actions := []chromedp.Action[chromedp.Void]{
		chromedp.Navigate(strings.TrimRight(url, "/") + "/ui/"),
		chromedp.WaitVisible("#token"),
		chromedp.SendKeys("#token", tok),
		chromedp.Click("#login-btn"),
		chromedp.Poll[chromedp.Void](`window.rackfence.stats().hosts > 0 || document.getElementById('login-error').textContent !== ''`, chromedp.WithPollingTimeout(30*time.Second)),
	}
	if host := os.Getenv("RACKFENCE_UI_DEMO_HOST"); host != "" {
		actions = append(actions,
			chromedp.SendKeys("#filter", host+"\r"),
			chromedp.WaitVisible("#panel-events"),
			chromedp.Evaluate[chromedp.Void](`document.getElementById('filter').value = ''; document.getElementById('filter').dispatchEvent(new Event('input'))`))
	}
	var shot []byte
	actions = append(actions,
		chromedp.Sleep(time.Second),
		chromedp.Func(func(ctx2 context.Context, tg *chromedp.Target) error {
			var err error
			shot, err = chromedp.CaptureScreenshot()(ctx2, tg)
			return err
		}))
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%v\npage errors: %v", err, b.pageErrors())
	}
	var loginErr string
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('login-error').textContent`))
	if err == nil {
		loginErr = raw
	}
	if loginErr != "" {
		t.Fatalf("sign-in refused: %s", loginErr)
	}
	if err := os.WriteFile(out, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes, %dx%d)", out, len(shot), width, height)
}
