package ui_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// browser is one headless Debian chromium driven over the DevTools
// protocol, with the page's console errors collected.
type browser struct {
	t      testing.TB
	root   context.Context // the browser; tabs are opened from it
	mu     sync.Mutex
	errors []string
}

// newBrowser starts chromium (failing in CI, skipping loudly elsewhere
// when it is missing) with the flags a root, offline machine needs.
func newBrowser(t testing.TB, width, height int) *browser {
	t.Helper()
	path := testenv.LookPath(t, "chromium")
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		// A test cluster serving HTTPS has its own CA, which chromium's
		// store does not hold; the tests are about the page, on loopback.
		chromedp.IgnoreCertErrors,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	}
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	root, cancelRoot := chromedp.NewContext(alloc)
	t.Cleanup(cancelRoot)
	// The first action on root starts the browser; it must run on root
	// itself (a derived context's cancel would close the browser).
	if err := chromedp.Do(root); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return &browser{t: t, root: root}
}

// tab opens a new tab (its own sessionStorage), bounded by timeout.
func (b *browser) tab(timeout time.Duration) context.Context {
	b.t.Helper()
	ctx, cancel := chromedp.NewContext(b.root)
	b.t.Cleanup(cancel)
	ctx, cancel2 := context.WithTimeout(ctx, timeout)
	b.t.Cleanup(cancel2)
	if err := chromedp.Do(ctx); err != nil { // opens the tab
		b.t.Fatalf("opening a chromium tab: %v", err)
	}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			// Chromium asks for /favicon.ico by itself whatever the page
			// links; that 404 is the browser's, not the page's.
			if strings.HasSuffix(m.URL, "/favicon.ico") {
				continue
			}
			// A request cut because the machine's network interfaces
			// changed (other processes adding loopback addresses) is the
			// host's doing; the page retries it.
			if strings.Contains(m.String(), "net::ERR_NETWORK_CHANGED") {
				continue
			}
			if m.IsException() || m.Type == "error" {
				b.mu.Lock()
				b.errors = append(b.errors, m.String()+" ("+m.URL+")")
				b.mu.Unlock()
			}
		}
	}()
	return ctx
}

// pageErrors are the exceptions and console errors the pages reported.
func (b *browser) pageErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}

// keepArtifact writes data under the test's artifact directory (kept with
// go test -artifacts -outputdir DIR) and, when RACKFENCE_ARTIFACTS is set,
// copies it there; it logs where.
func keepArtifact(t *testing.T, name string, data []byte) {
	t.Helper()
	p := filepath.Join(t.ArtifactDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("artifact: %s", p)
	if d := os.Getenv("RACKFENCE_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		q := filepath.Join(d, strings.ReplaceAll(t.Name(), "/", "_")+"-"+name)
		if err := os.WriteFile(q, data, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("artifact copied to %s", q)
	}
}
