package rolling

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestRollingUpgradeFromLastRelease: three members and a rack agent at
// the last release, under write load; each member in turn is replaced by
// the current binary (one is downgraded back once, while the cluster is
// mixed: safe, as nothing the old binary lacks was written); after every
// step all members hold the same state (equal state hashes at every index
// two current members both hashed; the same hosts on every member) and no
// acknowledged write is lost. A burst of writes at every step makes entries
// large enough to compress: none is compressed while the cluster is mixed,
// some are once every member is current, and every member holds them.
func TestRollingUpgradeFromLastRelease(t *testing.T) {
	testenv.SkipShort(t)
	oldDir := oldBinaries(t)
	oldCoord, oldAgent := filepath.Join(oldDir, "rackfence-coordinator"), filepath.Join(oldDir, "rackfence-agent")
	newCoord, newAgent := testenv.Binary(t, "rackfence-coordinator"), testenv.Binary(t, "rackfence-agent")
	start := time.Now()
	dir := t.TempDir()

	ms := newMembers(t, dir)
	for _, m := range ms {
		m.c.Bin = oldCoord
		m.start(t, true)
		if m.id == "m1" {
			testenv.Eventually(t, 60*time.Second, "admin token", func() error {
				_, err := os.Stat(filepath.Join(m.dir, "admin.token"))
				return err
			})
		}
	}
	tok, err := client.ReadTokenFile(filepath.Join(ms[0].dir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := client.New(client.Config{Coordinator: urls(ms), Token: tok, RetryFor: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 60*time.Second, "three members", func() error {
		l, err := admin.Members(ctx(t))
		if err != nil {
			return err
		}
		if len(l.Items) != 3 {
			return fmt.Errorf("%d members", len(l.Items))
		}
		return admin.SetCredentials(ctx(t), "bmc", wire.Credentials{Username: "admin", Password: "password"})
	})

	// A rack agent at the release, managing simulated BMCs.
	const simHosts = 6
	sim := rig.StartSim(t, dir, simHosts, 0)
	for i := 0; i < simHosts; i++ {
		if _, _, err := admin.ApplyHost(ctx(t), sim.Host(fmt.Sprintf("r1-h%02d", i), "r1", i)); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := admin.CreateToken(ctx(t), wire.TokenRequest{Role: wire.RoleAgent, Rack: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	agentTok := filepath.Join(dir, "agent.token")
	if err := os.WriteFile(agentTok, []byte(tr.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	startAgent := func(bin string) *testenv.Process {
		return rig.StartAgent(t, rig.AgentOpts{Coordinator: urls(ms), TokenFile: agentTok, Rack: "r1", ID: "a1",
			AuditFile: filepath.Join(dir, "guard.jsonl"), Bin: bin})
	}
	agent := startAgent(oldAgent)

	w := startWriter(admin)
	defer w.close()
	f := &figures{}
	check := func(step string) {
		t.Helper()
		f.steps++
		checkStep(t, step, ms, tok, w, f)
		checkCompression(t, step, admin, ms, tok, f.steps)
	}
	waitAvailable(t, admin, simHosts, "at the release")
	check("all at " + oldCommit)

	swap := func(m *member, bin string, current bool) {
		t.Helper()
		m.proc.Stop(15 * time.Second)
		m.c.Bin, m.current = bin, current
		m.start(t, false)
	}
	swap(ms[2], newCoord, true)
	check("m3 upgraded")
	swap(ms[2], oldCoord, false)
	check("m3 downgraded back to " + oldCommit + " (mixed cluster: safe)")
	swap(ms[2], newCoord, true)
	check("m3 upgraded again")
	swap(ms[1], newCoord, true)
	check("m2 upgraded")
	// m1, at the release and leading so far, stops: a current member
	// leads while m1 is recorded at the release (compress_test.go).
	burstUnderCurrentLeader(t, admin, ms, tok, 100)
	check("m1 back at " + oldCommit + " after a current member led")
	swap(ms[0], newCoord, true)
	check("m1 upgraded: all current")
	agent.Stop(15 * time.Second)
	agent = startAgent(newAgent)
	check("agent upgraded")
	waitAvailable(t, admin, simHosts, "after the upgrade")

	// The leader, current now, sees every member current and equal.
	testenv.Eventually(t, 60*time.Second, "the leader's gate and hash check", func() error {
		st, err := leaderStatus(t, admin, tok)
		if err != nil {
			return err
		}
		if st.Upgrade == nil || len(st.Upgrade.Lagging) != 0 || st.Upgrade.EffectiveVersion == "" || strings.Contains(st.Upgrade.EffectiveVersion, "legacy") {
			return fmt.Errorf("upgrade %+v", st.Upgrade)
		}
		if st.Upgrade.HashCheck == nil || len(st.Upgrade.HashCheck.Matching) != 2 || len(st.Upgrade.HashCheck.Mismatched) != 0 {
			return fmt.Errorf("hash check %+v", st.Upgrade.HashCheck)
		}
		return nil
	})

	// No downgrade to the release once every member and the agent run the
	// current binary: the agent's per-rack status reports are then written
	// as command type 22, which the release (from before the version gate)
	// would skip and diverge on; docs/operator.md ("Downgrades") says never
	// to take a member below the gate's first release at that point. The
	// downgrade while the cluster was mixed (m3 above) is the safe one.
	_ = agent
	t.Logf("FIGURES rolling upgrade: %d steps, %d writes acknowledged under load (%d with unknown outcome), %d acknowledged writes lost, "+
		"%d state hash comparisons, %d mismatches, took %s",
		f.steps, w.acked.Load(), w.unknown.Load(), f.lost, f.compared, f.mismatches, time.Since(start).Round(time.Second))
	if f.lost != 0 || f.mismatches != 0 {
		t.Fatalf("lost %d, mismatches %d", f.lost, f.mismatches)
	}
}

// leaderStatus is the leader's GET /v1/status (status is answered by the
// member asked; the hash check is the leader's).
func leaderStatus(t *testing.T, admin *client.Client, tok string) (*wire.ClusterStatus, error) {
	st, err := admin.Status(ctx(t))
	if err != nil {
		return nil, err
	}
	lc, err := client.New(client.Config{Coordinator: st.Leader, Token: tok, RetryFor: -1})
	if err != nil || st.Leader == "" {
		return nil, fmt.Errorf("leader %q: %v", st.Leader, err)
	}
	return lc.Status(ctx(t))
}

type figures struct {
	steps, lost, compared, mismatches int
}

func waitAvailable(t *testing.T, admin *client.Client, n int, when string) {
	t.Helper()
	testenv.Eventually(t, 120*time.Second, "r1 hosts available "+when, func() error {
		l, err := admin.ListHosts(ctx(t), client.HostFilter{Rack: "r1"})
		if err != nil {
			return err
		}
		ok := 0
		for _, h := range l.Items {
			if h.Status != nil && h.Status.ProvisioningState == wire.StateAvailable {
				ok++
			}
		}
		if ok != n {
			return fmt.Errorf("%d of %d available", ok, n)
		}
		return nil
	})
}

// checkStep checks one step: under load, every pair of current members
// agrees on the state hash at every index both hashed; with the writer
// paused, every member holds every acknowledged write.
func checkStep(t *testing.T, step string, ms []*member, tok string, w *writer, f *figures) {
	t.Helper()
	var cur []*member
	for _, m := range ms {
		if m.current {
			cur = append(cur, m)
		}
	}
	compared := 0
	if len(cur) >= 2 {
		testenv.Eventually(t, 90*time.Second, step+": current members hash at a common index", func() error {
			sums := map[uint64]map[string]string{}
			for _, m := range cur {
				_, h, err := health(m.url)
				if err != nil {
					return err
				}
				for _, s := range h.StateHashes {
					if sums[s.Index] == nil {
						sums[s.Index] = map[string]string{}
					}
					sums[s.Index][m.id] = s.Sum
				}
			}
			compared = 0
			for idx, by := range sums {
				if len(by) < 2 {
					continue
				}
				compared++
				first := ""
				for id, s := range by {
					if first == "" {
						first = s
					} else if s != first {
						f.mismatches++
						t.Errorf("%s: state hashes differ at index %d: %v (member %s)", step, idx, by, id)
					}
				}
			}
			if compared == 0 {
				return fmt.Errorf("no index hashed by two current members yet")
			}
			return nil
		})
		f.compared += compared
	}
	w.pause()
	defer w.resume()
	for _, m := range ms {
		c := memberClient(t, m, tok)
		var bad []string
		testenv.Eventually(t, 60*time.Second, step+": "+m.id+" holds every acknowledged write", func() error {
			l, err := c.ListHosts(ctx(t), client.HostFilter{})
			if err != nil {
				return err
			}
			if bad = w.lost(l.Items); len(bad) != 0 {
				return fmt.Errorf("%d hosts differ: %v", len(bad), bad)
			}
			return nil
		})
		f.lost += len(bad)
	}
	t.Logf("step %q: ok (%d writes acknowledged so far, %d indexes compared by current members)", step, w.acked.Load(), compared)
}
