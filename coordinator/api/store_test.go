package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/coordtest/member"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// applyFault is a Store whose Apply fails once with err when armed, around the real
// store. It is a fake because the fault is a race inside Raft that the
// real store cannot be made to produce on demand: leadership moving
// between the moment a write is appended and the moment it is known to
// be committed (raft.ErrLeadershipLost, which the store reports as
// coordinator.ErrOutcomeUnknown), or a leader stepping down before the
// write is appended (coordinator.ErrNotLeader). With commit set, the
// write is applied by the real store before the error is returned: the
// worst case of "outcome unknown", an acknowledged-nowhere write that
// did land. Every other method is the real store's.
type applyFault struct {
	Store
	mu     sync.Mutex
	armed  bool
	err    error
	commit bool
}

// arm makes the next Apply fail with err (applied first when commit).
func (f *applyFault) arm(err error, commit bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed, f.err, f.commit = true, err, commit
}

// fired reports whether the armed fault was used.
func (f *applyFault) fired() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.armed
}

func (f *applyFault) Apply(ctx context.Context, c fsm.Command) (any, error) {
	f.mu.Lock()
	armed, ferr, commit := f.armed, f.err, f.commit
	f.armed = false
	f.mu.Unlock()
	if !armed {
		return f.Store.Apply(ctx, c)
	}
	if commit {
		if _, err := f.Store.Apply(ctx, c); err != nil {
			return nil, err
		}
	}
	return nil, ferr
}

// TestApplyFaultAnswers: a write refused before it was appended answers
// 503 no_leader with Retry-After (the client may repeat it elsewhere, and
// nothing was applied); a write whose outcome is unknown answers 504
// "may have been applied" without Retry-After (the client must read
// first, and here it was applied); a write the leader could not append
// to its log answers 500 saying it was not applied and why.
func TestApplyFaultAnswers(t *testing.T) {
	cases := []struct {
		name       string
		err        error
		commit     bool
		status     int
		code       string
		retryAfter string
		applied    bool
		message    string
	}{
		{"not leader", coordinator.ErrNotLeader, false, http.StatusServiceUnavailable, wire.CodeNoLeader, "1", false, "no leader"},
		{"leader busy (enqueue timeout)", coordinator.ErrBusy, false, http.StatusServiceUnavailable, wire.CodeNoLeader, "1", false, "not applied"},
		{"leadership lost after commit", coordinator.ErrOutcomeUnknown, true, http.StatusGatewayTimeout, wire.CodeInternal, "", true, "may have been applied"},
		{"leadership lost before commit", coordinator.ErrOutcomeUnknown, false, http.StatusGatewayTimeout, wire.CodeInternal, "", false, "may have been applied"},
		{"wait ended after submit", errors.Join(coordinator.ErrOutcomeUnknown, context.DeadlineExceeded), false, http.StatusGatewayTimeout, wire.CodeInternal, "", false, "may have been applied"},
		{"leader cannot write its log", fmt.Errorf("%w (append in /data): write /data/raft.db: %w", coordinator.ErrLogWrite, syscall.ENOSPC),
			false, http.StatusInternalServerError, wire.CodeInternal, "", false, "NOT applied and the leader stepped down: repeat it (another member leads within seconds). The operator must fix the leader's disk: cannot write the Raft log (append in /data): write /data/raft.db: no space left on device"},
	}
	// One member for every case; each writes its own host.
	fault := &applyFault{}
	n := startNode(t, member.Config{ID: "n1", IP: "127.0.0.1", Dir: t.TempDir(), Bootstrap: true}, func(c *Config) {
		fault.Store = c.Store
		c.Store = fault
	})
	testenv.Eventually(t, 30*time.Second, "bootstrap leader ready", func() error {
		if !n.store.Ready() {
			return fmt.Errorf("state %s", n.store.State())
		}
		return nil
	})
	admin := adminTokenOf(t, n)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			host := fmt.Sprintf("h%d", i+1)
			fault.arm(tc.err, tc.commit)
			body, _ := json.Marshal(testHost(host, "r1"))
			req, err := http.NewRequest(http.MethodPut, n.url+"/v1/hosts/"+host, bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+admin)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("PUT: status %d, want %d: %s", resp.StatusCode, tc.status, raw)
			}
			d := errBody(t, raw)
			if d.Code != tc.code || !strings.Contains(d.Message, tc.message) {
				t.Errorf("PUT: %s %q, want code %s saying %q", d.Code, d.Message, tc.code, tc.message)
			}
			if got := resp.Header.Get("Retry-After"); got != tc.retryAfter {
				t.Errorf("PUT: Retry-After %q, want %q", got, tc.retryAfter)
			}
			if !fault.fired() {
				t.Fatal("the handler never called Apply")
			}
			code, _ := call(t, http.MethodGet, n.url+"/v1/hosts/"+host, admin, nil, nil)
			if applied := code == http.StatusOK; applied != tc.applied {
				t.Errorf("after the fault the host exists: %v, want %v (GET answered %d)", applied, tc.applied, code)
			}
		})
	}
}
