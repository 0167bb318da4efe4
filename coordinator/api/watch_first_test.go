package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/coordtest/member"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// holdApply is a Store whose Apply of the host named hold waits until
// release is closed: a write held in flight at a known moment, which a
// real write cannot be made to be on demand. Every other write and
// method is the real store's.
type holdApply struct {
	Store
	hold    string
	entered chan struct{} // closed when the held write reached Apply
	release chan struct{}
}

func (h *holdApply) Apply(ctx context.Context, c fsm.Command) (any, error) {
	if p, ok := c.(fsm.PutHostCmd); ok && p.Host.Name == h.hold {
		close(h.entered)
		select {
		case <-h.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return h.Store.Apply(ctx, c)
}

// streamSeen follows one streamed watch and records the host names its
// lines carried.
type streamSeen struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (s *streamSeen) has(names ...string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range names {
		if !s.seen[n] {
			return false
		}
	}
	return true
}

func followSeen(ctx context.Context, t *testing.T, url, token string) *streamSeen {
	s := &streamSeen{seen: map[string]bool{}}
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			var l wire.WatchResponse
			if json.Unmarshal(sc.Bytes(), &l) != nil {
				continue
			}
			s.mu.Lock()
			for _, h := range l.Hosts {
				s.seen[h.Name] = true
			}
			s.mu.Unlock()
		}
	}()
	return s
}

// metricOr reads a metric without labels from /metrics text, or def when
// it is not there.
func metricOr(metrics, name string, def int) int {
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindStringSubmatch(metrics)
	if m == nil {
		return def
	}
	var v float64
	fmt.Sscan(m[1], &v)
	return int(v)
}

// TestWatchLinesWaitForWrites: while a write is in flight (held in
// Apply), a change committed meanwhile is not written to the streamed
// watchers: their lines wait, none goes out, until the held write is
// answered; then every watcher gets both changes.
func TestWatchLinesWaitForWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("a real member and 6 streamed watchers")
	}
	hold := &holdApply{hold: "held", entered: make(chan struct{}), release: make(chan struct{})}
	n := startNode(t, member.Config{ID: "n1", IP: "127.0.0.1", Dir: t.TempDir(), Bootstrap: true}, func(c *Config) {
		hold.Store = c.Store
		c.Store = hold
	})
	n.m.WaitLeader(t)
	n.srv.watches.first.max = time.Hour // the bound is not under test here
	admin := adminTokenOf(t, n)
	u := n.url
	op := newToken(t, u, admin, wire.RoleOperator, "")
	must(t, 201, "PUT", u+"/v1/hosts/base", op, testHost("base", "r1"), nil)
	var first wire.WatchResponse
	must(t, 200, "GET", u+"/v1/watch?rack=r1&index=0", op, nil, &first)

	const watchers = 6
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var streams []*streamSeen
	for i := 0; i < watchers; i++ {
		streams = append(streams, followSeen(ctx, t, fmt.Sprintf("%s/v1/watch?rack=r1&index=%d&stream=true", u, first.Index), op))
	}
	testenv.Eventually(t, time.Minute, "6 streams open", func() error {
		if !strings.Contains(scrape(t, u), fmt.Sprintf("rackfence_watch_streams %d\n", watchers)) {
			return fmt.Errorf("%s", grepWatch(scrape(t, u)))
		}
		return nil
	})
	sent := counter(t, scrape(t, u), "rackfence_watch_answers_sent_total")

	held := make(chan int, 1)
	go func() {
		body, _ := json.Marshal(testHost("held", "r1"))
		req, _ := http.NewRequest(http.MethodPut, u+"/v1/hosts/held", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+op)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			held <- 0
			return
		}
		resp.Body.Close()
		held <- resp.StatusCode
	}()
	select {
	case <-hold.entered:
	case <-time.After(time.Minute):
		t.Fatal("the held write did not reach Apply within a minute")
	}
	must(t, 201, "PUT", u+"/v1/hosts/seen", op, testHost("seen", "r1"), nil)
	// The change of "seen" is committed and its answer encoded for the
	// crowd; its lines must now wait for the held write, not go out.
	testenv.Eventually(t, time.Minute, "a line of the change held back for the write in flight", func() error {
		m := scrape(t, u)
		if got := counter(t, m, "rackfence_watch_answers_sent_total"); got > sent {
			t.Fatalf("%d lines written while a write was in flight; want them held until it is answered", got-sent)
		}
		if metricOr(m, "rackfence_watch_lines_held_for_writes", 0) < 1 {
			return fmt.Errorf("no line held yet:\n%s", grepWatch(m))
		}
		return nil
	})
	for i, s := range streams {
		if s.has("seen") {
			t.Fatalf("watcher %d saw the change while a write was in flight", i)
		}
	}
	close(hold.release)
	select {
	case code := <-held:
		if code != 201 {
			t.Fatalf("held write: %d, want 201", code)
		}
	case <-time.After(time.Minute):
		t.Fatal("the held write was not answered within a minute of its release")
	}
	testenv.Eventually(t, 2*time.Minute, "every watcher saw both changes", func() error {
		for i, s := range streams {
			if !s.has("seen", "held") {
				return fmt.Errorf("watcher %d has not seen both", i)
			}
		}
		return nil
	})
	if m := scrape(t, u); metricOr(m, "rackfence_watch_lines_held_for_writes", -1) != 0 {
		t.Fatalf("lines still held after the writes ended:\n%s", grepWatch(m))
	}
}

// TestWritesFirstBounded: a write that stays in flight holds the lines
// back no longer than the bound: a line waiting for it gets its turn
// while it is still in flight.
func TestWritesFirstBounded(t *testing.T) {
	g := newWritesFirst()
	g.max = 10 * time.Millisecond
	g.begin()
	defer g.end()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := g.lineTurn(ctx); err != nil {
		t.Fatalf("a line waiting for a write that stays in flight got no turn within a minute: %v", err)
	}
	g.lineDone()
}

// TestLineTurnAllocatesNothing: with no write in flight a line's turn
// costs no allocation.
func TestLineTurnAllocatesNothing(t *testing.T) {
	g := newWritesFirst()
	ctx := context.Background()
	if allocs := testing.AllocsPerRun(200, func() {
		if g.lineTurn(ctx) == nil {
			g.lineDone()
		}
	}); allocs != 0 {
		t.Fatalf("a line's turn allocated %.1f objects, want 0", allocs)
	}
}
