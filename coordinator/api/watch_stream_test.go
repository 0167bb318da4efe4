package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestWatchStreamCrowd: 80 streamed watchers (stream=true) of one rack,
// each one request, see every change of 30 quick writes as lines of
// their one answer, and the member encodes each answer once for the
// crowd: at most one encoding per write, not one per watcher.
func TestWatchStreamCrowd(t *testing.T) {
	n, op, first := startWatchCrowd(t, "a real member, 80 streamed watchers over HTTP")
	u := n.url

	const watchers, writes = 80, 30
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, watchers)
	for i := 0; i < watchers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- followStream(ctx, fmt.Sprintf("%s/v1/watch?rack=r1&index=%d&stream=true", u, first.Index), op, writes)
		}()
	}
	for end := time.Now().Add(60 * time.Second); !strings.Contains(scrape(t, u), "rackfence_watch_streams 80\n"); {
		if time.Now().After(end) {
			t.Fatalf("80 streams not open after a minute:\n%s", grepWatch(scrape(t, u)))
		}
		time.Sleep(20 * time.Millisecond)
	}
	before := counter(t, scrape(t, u), "rackfence_watch_answers_encoded_total")
	for i := 0; i < writes; i++ {
		must(t, 201, "PUT", fmt.Sprintf("%s/v1/hosts/new-%02d", u, i), op, testHost(fmt.Sprintf("new-%02d", i), "r1"), nil)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the streamed watchers did not all see every write within 2 minutes")
	}
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if enc := counter(t, scrape(t, u), "rackfence_watch_answers_encoded_total") - before; enc > writes {
		t.Fatalf("%d answers encoded for %d writes and %d streamed watchers: want at most one per write", enc, writes, watchers)
	}
}

// followStream reads one streamed watch until it saw want hosts named
// new-*, checking every line answers after the one before.
func followStream(ctx context.Context, url, token string, want int) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != wire.MIMENDJSON {
		return fmt.Errorf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	dec := json.NewDecoder(resp.Body)
	seen, last := map[string]bool{}, uint64(0)
	for len(seen) < want {
		var line wire.WatchResponse
		if err := dec.Decode(&line); err != nil {
			return fmt.Errorf("after %d of %d hosts: %w", len(seen), want, err)
		}
		if line.Index < last {
			return fmt.Errorf("a line at index %d after one at %d", line.Index, last)
		}
		last = line.Index
		for _, h := range line.Hosts {
			if strings.HasPrefix(h.Name, "new-") {
				seen[h.Name] = true
			}
		}
	}
	return nil
}

// counter reads a counter (or gauge) without labels from /metrics text.
func counter(t *testing.T, metrics, name string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindStringSubmatch(metrics)
	if m == nil {
		t.Fatalf("%s not on /metrics", name)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return int(v)
}

func grepWatch(metrics string) string {
	var out []string
	for _, l := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(l, "rackfence_watch") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestWatchStreamParam: stream takes true or false, and says so.
func TestWatchStreamParam(t *testing.T) {
	n, admin := startLeader(t, "127.0.0.1")
	code, raw := call(t, "GET", n.url+"/v1/watch?rack=r1&stream=yes", admin, nil, nil)
	if code != 400 || !strings.Contains(string(raw), `"field":"stream"`) {
		t.Fatalf("stream=yes: %d %s, want 400 naming the field", code, raw)
	}
}
