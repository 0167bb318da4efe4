package ui_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/rackfence/rackfence/shared/client"
)

// TestDemoScreenshot photographs the dashboard of a running `make demo`
// for the README (docs/dashboard.png). It runs only when told where:
//
//	DEMO_DURATION=300 make demo &        # wait until the hosts settle, then:
//	source .demo/env
//	rackfencectl detach r1-h01 --reason "hand over" --wait
//	rackfencectl drain r1-h07 --mode maintenance --wait
//	RACKFENCE_UI_DEMO_URL=$RACKFENCE_COORDINATOR RACKFENCE_UI_DEMO_TOKEN_FILE=$RACKFENCE_TOKEN_FILE \
//	  RACKFENCE_UI_DEMO_SHOT=$PWD/docs/dashboard.png go test -count=1 -run TestDemoScreenshot ./coordinator/ui/
func TestDemoScreenshot(t *testing.T) {
	url, tokFile, out := os.Getenv("RACKFENCE_UI_DEMO_URL"), os.Getenv("RACKFENCE_UI_DEMO_TOKEN_FILE"), os.Getenv("RACKFENCE_UI_DEMO_SHOT")
	if url == "" || tokFile == "" || out == "" {
		t.Skip("set RACKFENCE_UI_DEMO_URL, RACKFENCE_UI_DEMO_TOKEN_FILE and RACKFENCE_UI_DEMO_SHOT to photograph a running demo (see the doc comment)")
	}
	tok, err := client.ReadTokenFile(tokFile)
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, 1440, 860)
	ctx := b.tab(2 * time.Minute)
	var shot []byte
	if err := chromedp.Do(ctx,
		chromedp.Navigate(url+"/ui/"),
		chromedp.WaitVisible("#token"),
		chromedp.SendKeys("#token", tok),
		chromedp.Click("#login-btn"),
		chromedp.Poll[chromedp.Void](`window.rackfence.stats().hosts > 0`, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.SendKeys("#filter", "r1-h01\r"),
		chromedp.WaitVisible("#panel-events table"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById('filter').value = ''; document.getElementById('filter').dispatchEvent(new Event('input'))`),
		chromedp.Sleep(time.Second),
		chromedp.Func(func(ctx2 context.Context, tg *chromedp.Target) error {
			var err error
			shot, err = chromedp.CaptureScreenshot()(ctx2, tg)
			return err
		}),
	); err != nil {
		t.Fatalf("%v\npage errors: %v", err, b.pageErrors())
	}
	if err := os.WriteFile(out, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", out, len(shot))
}
