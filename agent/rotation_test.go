package agent_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestTokenRotationWithoutRestart rotates a running agent's token twice —
// once picked up from the file by the poll, once by SIGHUP — revoking the
// old token each time, and checks the agent keeps renewing the same lease
// (same epoch, nothing ended in the history) with no restart.
func TestTokenRotationWithoutRestart(t *testing.T) {
	e := newEnv(t, envOpts{})
	proc := e.startAgent("r1", "a1")
	tokFile := filepath.Join(e.c.Dir, "agent-a1.token")
	var lease *wire.Lease
	testenv.Eventually(t, 60*time.Second, "a1 holds rack r1", func() error {
		l, err := e.admin.GetLease(ctx(t), "r1")
		if err != nil {
			return err
		}
		if l.Holder != "a1" {
			return fmt.Errorf("holder %q", l.Holder)
		}
		lease = l
		return nil
	})

	var newID string // the token ID rotate put in place last
	rotate := func(round int, signal bool) {
		t.Helper()
		oldText, err := client.ReadTokenFile(tokFile)
		if err != nil {
			t.Fatal(err)
		}
		oldID := agent.TokenID(oldText)
		nt, err := e.admin.CreateToken(ctx(t), wire.TokenRequest{Role: wire.RoleAgent, Rack: "r1", Name: fmt.Sprintf("agent-r1-rot%d", round)})
		if err != nil {
			t.Fatal(err)
		}
		tmp := tokFile + ".new"
		if err := os.WriteFile(tmp, []byte(nt.Token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, tokFile); err != nil {
			t.Fatal(err)
		}
		newID = nt.ID
		// The agent logs JSON (internal/daemon's default --log-format).
		want := `"tokenID":"` + nt.ID + `"`
		if signal {
			if err := proc.Signal(syscall.SIGHUP); err != nil {
				t.Fatal(err)
			}
			want = `"reason":"SIGHUP",` + want
		}
		testenv.Eventually(t, 30*time.Second, "the agent picked up the new token", func() error {
			if !strings.Contains(proc.Output(), want) {
				return fmt.Errorf("no %q in the agent's log yet", want)
			}
			return nil
		})
		if _, err := e.admin.RevokeToken(ctx(t), oldID); err != nil {
			t.Fatalf("revoke the old token %s: %v", oldID, err)
		}
		old, _ := client.New(client.Config{Coordinator: e.url, Token: oldText, RetryFor: -1})
		if _, err := old.Racks(ctx(t)); !client.IsUnauthorized(err) {
			t.Fatalf("the old token still works: %v", err)
		}
	}
	rotate(1, false)
	rotate(2, true)

	// The agent still holds the same lease more than two lease TTLs (5 s)
	// after the last revocation: without renewals the leader would have
	// expired it, and only the newest token is left to renew with. (The
	// audit trail records only an agent's refused renewals, checked
	// below.)
	revoked := time.Now()
	for time.Since(revoked) < 12*time.Second {
		l, err := e.admin.GetLease(ctx(t), "r1")
		if err != nil || l.Holder != "a1" || l.Epoch != lease.Epoch {
			t.Fatalf("%s after the revocation: lease %+v (was epoch %d) %v", time.Since(revoked).Round(time.Millisecond), l, lease.Epoch, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	l, err := e.admin.GetLease(ctx(t), "r1")
	if err != nil || l.Holder != "a1" || l.Epoch != lease.Epoch {
		t.Fatalf("after rotation: lease %+v (was epoch %d) %v", l, lease.Epoch, err)
	}
	hist, err := e.admin.LeaseHistory(ctx(t), "r1")
	if err != nil || len(hist.Items) != 1 || hist.Items[0].End != "" {
		t.Fatalf("lease history after rotation: %+v %v", hist, err)
	}
	if proc.Exited() {
		t.Fatal("the agent exited")
	}
	out := proc.Output()
	if strings.Contains(out, "refused this agent's token") {
		t.Fatalf("the agent was refused during the rotation:\n%s", out)
	}
	for _, f := range []string{tokFile} {
		b, _ := os.ReadFile(f)
		if strings.Contains(out, strings.TrimSpace(string(b))) {
			t.Fatal("the agent logged its token")
		}
	}
	// The coordinator's audit trail shows no lease call refused (a renewal
	// with a revoked token would be, with 401).
	a, err := e.admin.Audit(ctx(t), 1000)
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, r := range a.Items {
		if r.Route == "/v1/racks/:rack/lease" && r.Code == 401 {
			refused++
		}
	}
	if refused != 0 {
		t.Fatalf("audit: %d lease calls refused", refused)
	}
	t.Logf("lease epoch %d held through two rotations (poll, SIGHUP) and two TTLs after (newest token %s), 0 lease calls refused", l.Epoch, newID)
}
