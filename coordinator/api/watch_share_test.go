package api

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestWatchersShareOneAnswer: watchers waiting on one rack at the same
// index share one answer for a change (the FSM builds it once, not once
// per watcher), and every watcher following from answer to answer sees
// every change, those of quick successive writes included (80 watchers:
// a woken round lingers).
func TestWatchersShareOneAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("a real member, 80 watchers over HTTP")
	}
	n, admin := startLeader(t, "127.0.0.1")
	u := n.url
	op := newToken(t, u, admin, wire.RoleOperator, "")
	must(t, 201, "PUT", u+"/v1/hosts/base", op, testHost("base", "r1"), nil)
	var first wire.WatchResponse
	must(t, 200, "GET", u+"/v1/watch?rack=r1&index=0", op, nil, &first)

	const watchers = 80
	want := []string{"new-a", "new-b", "new-c"}
	var wg sync.WaitGroup
	errs := make(chan error, watchers)
	answered := make(chan struct{}, watchers) // each watcher's first answer
	for i := 0; i < watchers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seen, index := map[string]bool{}, first.Index
			deadline := time.Now().Add(60 * time.Second)
			for len(seen) < len(want) {
				if time.Now().After(deadline) {
					errs <- fmt.Errorf("watcher %d saw %v after a minute, want %v", i, seen, want)
					return
				}
				code, raw := call(t, "GET", fmt.Sprintf("%s/v1/watch?rack=r1&index=%d&timeout=20s", u, index), op, nil, nil)
				var resp wire.WatchResponse
				if err := json.Unmarshal(raw, &resp); code != 200 || err != nil {
					errs <- fmt.Errorf("watcher %d: %d %s", i, code, raw)
					return
				}
				for _, h := range resp.Hosts {
					if strings.HasPrefix(h.Name, "new-") {
						seen[h.Name] = true
					}
				}
				if index == first.Index {
					answered <- struct{}{}
				}
				index = resp.Index
			}
		}()
	}
	// Every watcher waiting before the first write (the gauge; the
	// deadline is generous).
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end) && !strings.Contains(scrape(t, u), "rackfence_watch_waiting 80\n"); {
		time.Sleep(20 * time.Millisecond)
	}
	before := n.store.FSM().WatchAnswers()
	must(t, 201, "PUT", u+"/v1/hosts/"+want[0], op, testHost(want[0], "r1"), nil)
	for i := 0; i < watchers; i++ {
		select {
		case <-answered:
		case <-time.After(60 * time.Second):
			t.Fatalf("%d of %d watchers answered a minute after the write", i, watchers)
		}
	}
	built := n.store.FSM().WatchAnswers() - before
	// The other changes come quickly one after the other while the
	// watchers come back: each sees them all, in one answer or several.
	for _, name := range want[1:] {
		must(t, 201, "PUT", u+"/v1/hosts/"+name, op, testHost(name, "r1"), nil)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if built != 1 {
		t.Fatalf("the FSM built %d answers for %d watchers waiting at one index and one change: want 1, shared", built, watchers)
	}
}

// scrape returns the member's /metrics text.
func scrape(t *testing.T, u string) string {
	t.Helper()
	_, raw := call(t, "GET", u+"/metrics", "", nil, nil)
	return string(raw)
}
