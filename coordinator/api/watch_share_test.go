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
// index share one answer per change (the FSM builds it about once, not
// once per watcher), and every watcher following from answer to answer
// sees every change, the changes of quick successive writes included
// (80 watchers: the woken round lingers and answers both at once).
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
	want := []string{"new-a", "new-b"}
	var wg sync.WaitGroup
	errs := make(chan error, watchers)
	for i := 0; i < watchers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seen, index := map[string]bool{}, first.Index
			deadline := time.Now().Add(60 * time.Second)
			for !seen[want[0]] || !seen[want[1]] {
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
					seen[h.Name] = true
				}
				index = resp.Index
			}
		}()
	}
	// Every watcher waiting before the writes (the gauge; the deadline is
	// generous, and passing it only makes answers less likely to share).
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end) && !strings.Contains(scrape(t, u), "rackfence_watch_waiting 80\n"); {
		time.Sleep(20 * time.Millisecond)
	}
	before := n.store.FSM().WatchAnswers()
	for _, name := range want {
		must(t, 201, "PUT", u+"/v1/hosts/"+name, op, testHost(name, "r1"), nil)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// One answer per change (two writes: at most two rounds), with room
	// for a few watchers that re-polled late; one per watcher is 80 to 160.
	if built := n.store.FSM().WatchAnswers() - before; built > watchers/8 {
		t.Fatalf("the FSM built %d answers for %d watchers and 2 changes: want about one per change, shared", built, watchers)
	}
}

// scrape returns the member's /metrics text.
func scrape(t *testing.T, u string) string {
	t.Helper()
	_, raw := call(t, "GET", u+"/metrics", "", nil, nil)
	return string(raw)
}
