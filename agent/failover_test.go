package agent_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestCoordinatorFailover: an agent given three member URLs keeps managing
// its rack when the leader is killed -9: its watch moves to another member
// and a detach made after the failover is acknowledged.
func TestCoordinatorFailover(t *testing.T) {
	e := newEnv(t, envOpts{bmcs: 2})
	tokFile := e.adminTokenFile()
	urls := []string{e.url}
	procs := []*testenv.Process{e.coord}
	for i := 2; i <= 3; i++ {
		m := rig.StartCoordinator(t, t.TempDir(), rig.CoordOpts{NodeID: fmt.Sprintf("n%d", i), Join: e.c})
		urls = append(urls, m.URL)
		procs = append(procs, m.Proc)
	}
	testenv.Eventually(t, 90*time.Second, "a cluster of three", func() error {
		st, err := e.admin.Status(ctx(t))
		if err != nil {
			return err
		}
		if len(st.Members) != 3 {
			return fmt.Errorf("%d members", len(st.Members))
		}
		for _, u := range urls[1:] {
			r, err := testenv.HTTPClient(e.c.CAFile).Get(u + "/v1/health")
			if err != nil {
				return err
			}
			r.Body.Close()
		}
		return nil
	})
	all := strings.Join(urls, ",")
	tok, _ := client.ReadTokenFile(tokFile)
	admin, err := client.New(client.Config{Coordinator: all, Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	e.admin, e.c.Admin = admin, admin

	e.apply(e.hostSpec("c0", "r1", 0))
	e.apply(e.hostSpec("c1", "r1", 1))
	a := rig.StartAgent(t, rig.AgentOpts{Coordinator: all, TokenFile: e.agentToken("r1"), Rack: "r1", ID: "a1",
		LeaseTTL: 10 * time.Second, LogLevel: "debug"})
	e.waitHost("c0", 60*time.Second, "available", stateIs(wire.StateAvailable, wire.OpOK))
	e.waitHost("c1", 60*time.Second, "available", stateIs(wire.StateAvailable, wire.OpOK))

	// Kill -9 the leader.
	st, err := e.admin.Status(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	killed := -1
	for i, u := range urls {
		if u == st.Leader {
			killed = i
		}
	}
	if killed < 0 {
		t.Fatalf("leader %q is none of %v", st.Leader, urls)
	}
	procs[killed].Kill()
	t.Logf("killed the leader %s", urls[killed])

	// The admin client may still hold a pooled connection to the killed
	// member; a POST on it fails with "may have been applied", which the
	// client rightly does not retry. Do what that error tells an operator:
	// check, and repeat only if the intent is not there.
	testenv.Eventually(t, 60*time.Second, "detach after failover", func() error {
		_, err := e.admin.Detach(ctx(t), "c1", wire.IntentRequest{Reason: "after failover"})
		if err == nil {
			return nil
		}
		h, gerr := e.admin.GetHost(ctx(t), "c1")
		if gerr == nil && h.Intents != nil && h.Intents.Detach != nil {
			return nil // the first attempt was applied
		}
		return err
	})
	e.waitHost("c1", 90*time.Second, "detach acknowledged after failover", func(h *wire.Host) error {
		if h.Intents == nil || h.Intents.Detach == nil || !h.Intents.Detach.Acknowledged {
			return fmt.Errorf("intents %+v", h.Intents)
		}
		return nil
	})
	if a.Exited() {
		t.Fatalf("agent exited:\n%s", a.Output())
	}
}

// TestCoordinatorOutage: with the only coordinator down the agent backs
// off instead of spinning, and once it is back (same data dir) the agent
// takes the rack again and acts on a change made after the restart.
func TestCoordinatorOutage(t *testing.T) {
	e := newEnv(t, envOpts{bmcs: 1})
	e.apply(e.hostSpec("o0", "r1", 0))
	a := e.startAgent("r1", "a1")
	e.waitHost("o0", 60*time.Second, "available", stateIs(wire.StateAvailable, wire.OpOK))

	e.coord.Kill()
	killedAt := len(a.Output())
	killed := time.Now()
	// Ends on two logged events, not on a fixed wait: the agent gave the
	// lease up, and after that a retry announced a wait of 2 s or more
	// (the backoff grew). A spinning agent never logs the long wait, or
	// logs far more retries on the way.
	var tail string
	var lostAfter time.Duration // when the loss was first seen in the log
	testenv.Eventually(t, 90*time.Second, "lease lost, then a backed-off retry", func() error {
		tail = a.Output()[killedAt:]
		_, after, lost := strings.Cut(tail, "lost the rack lease")
		if !lost {
			return fmt.Errorf("no \"lost the rack lease\" yet")
		}
		if lostAfter == 0 {
			lostAfter = time.Since(killed)
		}
		if maxRetryIn(after) < 2*time.Second {
			return fmt.Errorf("no retry with a wait of 2 s or more after the lease was lost")
		}
		return nil
	})
	if lostAfter > 10*time.Second {
		t.Errorf("the agent kept its lease %s with no coordinator (TTL 3s):\n%s", lostAfter.Round(time.Millisecond), tail)
	}
	retries := strings.Count(tail, "retrying")
	t.Logf("%d retry log lines in %s without a coordinator, until the backoff reached 2 s", retries, time.Since(killed).Round(time.Millisecond))
	if retries > 40 {
		t.Fatalf("%d retries without a coordinator before the backoff reached 2 s: no backoff?\n%s", retries, tail)
	}

	e.restartCoordinator()
	testenv.Eventually(t, 60*time.Second, "the restarted coordinator serving", func() error {
		_, err := e.admin.GetHost(ctx(t), "o0")
		return err
	})
	if _, err := e.admin.Detach(ctx(t), "o0", wire.IntentRequest{Reason: "after restart"}); err != nil {
		t.Fatal(err)
	}
	e.waitHost("o0", 60*time.Second, "detach acknowledged after the restart", func(h *wire.Host) error {
		if h.Intents == nil || h.Intents.Detach == nil || !h.Intents.Detach.Acknowledged {
			return fmt.Errorf("intents %+v", h.Intents)
		}
		return nil
	})
}

var retryInRe = regexp.MustCompile(`"?retryIn"?[=:]"?([0-9][0-9a-zµ.]*)`)

// maxRetryIn is the longest retryIn a log text announces (text handler:
// retryIn=1.6s; JSON: "retryIn":"1.6s" or nanoseconds).
func maxRetryIn(log string) time.Duration {
	var max time.Duration
	for _, m := range retryInRe.FindAllStringSubmatch(log, -1) {
		d, err := time.ParseDuration(m[1])
		if err != nil {
			n, errN := strconv.ParseInt(m[1], 10, 64)
			if errN != nil {
				continue
			}
			d = time.Duration(n)
		}
		if d > max {
			max = d
		}
	}
	return max
}
