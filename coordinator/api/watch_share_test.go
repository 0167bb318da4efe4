package api

import (
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/coordtest/member"
)

// TestWatchersShareOneAnswer: watchers waiting on one rack at the same
// index share one answer for a change (the FSM builds it once, not once
// per watcher), and every watcher following from answer to answer sees
// every change, those of quick successive writes included (80 watchers:
// a woken round lingers).
func TestWatchersShareOneAnswer(t *testing.T) {
	n, op, first := startWatchCrowd(t, "a real member, 80 watchers over HTTP")
	u := n.url

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

// startWatchCrowd starts a leader for a crowd of watchers of rack r1
// (skipped under -short, saying what): an operator token, host "base" on
// r1, and the first watch answer the watchers follow from.
func startWatchCrowd(t *testing.T, what string) (*node, string, wire.WatchResponse) {
	t.Helper()
	if testing.Short() {
		t.Skip(what)
	}
	n, admin := startLeader(t, "127.0.0.1")
	op := newToken(t, n.url, admin, wire.RoleOperator, "")
	must(t, 201, "PUT", n.url+"/v1/hosts/base", op, testHost("base", "r1"), nil)
	var first wire.WatchResponse
	must(t, 200, "GET", n.url+"/v1/watch?rack=r1&index=0", op, nil, &first)
	return n, op, first
}

// scrape returns the member's /metrics text.
func scrape(t *testing.T, u string) string {
	t.Helper()
	_, raw := call(t, "GET", u+"/metrics", "", nil, nil)
	return string(raw)
}

// TestSlowWatcherCutOff: a watcher that asks for a large answer and reads
// none of it holds the member no longer than WatchWriteTimeout without
// progress: its connection is cut and counted, and a watcher that reads is
// answered whole meanwhile, however long its 8 MB take.
func TestSlowWatcherCutOff(t *testing.T) {
	if testing.Short() {
		t.Skip("a real member and 320 hosts of 64 long labels each")
	}
	// 5 s without progress: long enough that the reading watcher (this
	// test process, starved on a loaded 2-core machine) is never cut.
	n := startNode(t, member.Config{ID: "n1", IP: "127.0.0.1", Dir: t.TempDir(), Bootstrap: true}, func(c *Config) { c.WatchWriteTimeout = 5 * time.Second })
	n.m.WaitLeader(t)
	admin := adminTokenOf(t, n)
	u := n.url
	op := newToken(t, u, admin, wire.RoleOperator, "")
	const hosts = 320 // 64 labels of about 390 bytes: about 8 MB in all, twice the most a socket buffers here
	for i := 0; i < hosts; i++ {
		h := testHost(fmt.Sprintf("big-%02d", i), "r1")
		h.Labels = map[string]string{}
		for j := 0; j < wire.MaxLabels; j++ {
			key := strings.Repeat("p", 250) + fmt.Sprintf("%03d/", j) + strings.Repeat("n", 63)
			h.Labels[key] = strings.Repeat("v", 63)
		}
		must(t, 201, "PUT", u+"/v1/hosts/"+h.Name, op, h, nil)
	}
	// The slow watcher: a receive buffer of 4 KiB it never reads from.
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(u, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /v1/watch?rack=r1&index=0 HTTP/1.1\r\nHost: member\r\nAuthorization: Bearer %s\r\n\r\n", op)

	var whole wire.WatchResponse
	must(t, 200, "GET", u+"/v1/watch?rack=r1&index=0", op, nil, &whole)
	if len(whole.Hosts) != hosts {
		t.Fatalf("a watcher that reads: %d hosts, want %d", len(whole.Hosts), hosts)
	}
	for end := time.Now().Add(30 * time.Second); !strings.Contains(scrape(t, u), "rackfence_watch_slow_cut_total 1\n"); {
		if time.Now().After(end) {
			t.Fatal("the watcher that reads nothing was not cut off within 30 s (rackfence_watch_slow_cut_total is not 1)")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if m := scrape(t, u); !strings.Contains(m, "rackfence_watch_waiting 0\n") {
		t.Fatalf("after the cut a watch still waits:\n%s", m)
	}
}
