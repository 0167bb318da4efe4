package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestStopLeaderWithStuckFollower: the leader of a 3-member tier gets
// SIGTERM while its replication to one follower is stuck: that follower is
// SIGSTOPped under a stream of writes until the leader's replication to it
// waits on it (in netPipeline.AppendEntries or an AppendEntries RPC, seen
// in the leader's goroutine dump), as with a follower whose disk is full.
// Raft's shutdown waits for that goroutine (here up to the transport's 10 s
// deadline; in the field, stuck in netPipeline.AppendEntries, for over a
// minute), and all that time the leader's heartbeats keep the others from
// electing. The leader must exit within
// --stop-timeout (plus slack for a loaded machine), and once the stuck
// follower resumes the two survivors must accept writes. Then a stop with
// every follower answering exits 0 within the bound.
//
// The bound is passed as RACKFENCE_STOP_TIMEOUT, which a binary without the
// setting ignores, so the same test measures a binary from before it.
func TestStopLeaderWithStuckFollower(t *testing.T) {
	bin := testenv.Binary(t, "rackfence-coordinator")
	const bound, slack = 2 * time.Second, 5 * time.Second
	env := []string{"RACKFENCE_STOP_TIMEOUT=" + bound.String()}
	pprof := map[*member]string{}
	ms, token := startCluster(t, bin, 3, clusterOpts{env: env, prepare: func(m *member) {
		p := fmt.Sprintf("%s:%d", m.ip, testenv.FreePort(t, m.ip))
		pprof[m] = "http://" + p
		m.args = append(m.args, "--pprof-addr", p)
	}})
	leader := leaderOf(t, ms, token)
	var stuck, healthy *member
	for _, m := range ms {
		switch {
		case m == leader:
		case stuck == nil:
			stuck = m
		default:
			healthy = m
		}
	}
	if err := stuck.proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stuck.proc.Signal(syscall.SIGCONT) })

	// Writes through the leader commit with the healthy follower while the
	// entries for the stopped one fill the leader's pipeline to it.
	var acked atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if putHost(leader, token, fmt.Sprintf("s%d-%05d", w, i)) == nil {
					acked.Add(1)
				} else {
					time.Sleep(20 * time.Millisecond)
				}
			}
		}()
	}
	stopWriters := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopWriters()
	blocked := 0
	testenv.Eventually(t, 90*time.Second, "the leader's replication to the stopped follower blocked", func() error {
		if replicationBlocked(pprof[leader]) {
			blocked++
		} else {
			blocked = 0
		}
		if blocked < 5 { // seen in consecutive dumps over a quarter second
			return fmt.Errorf("not blocked yet (%d writes acknowledged)", acked.Load())
		}
		return nil
	})

	// Watch the healthy follower: when does it see a leader other than the
	// stopping one?
	start := time.Now()
	var otherLeader atomic.Int64 // nanoseconds after SIGTERM, 0: not yet
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		for otherLeader.Load() == 0 {
			select {
			case <-stop:
				return
			default:
			}
			var st wire.ClusterStatus
			if _, err := do("GET", healthy.url()+"/v1/status", token, nil, &st); err == nil && st.Leader != "" && st.Leader != leader.url() {
				otherLeader.Store(int64(time.Since(start)))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	if err := leader.proc.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exitErr, exited := leader.proc.Wait(bound + 40*time.Second)
	took := time.Since(start)
	if !exited {
		leader.proc.Kill()
	}
	t.Logf("leader %s exited %s after SIGTERM (%v; --stop-timeout %s); %d writes acknowledged before", leader.id, took.Round(time.Millisecond), exitErr, bound, acked.Load())
	for _, l := range strings.Split(leader.proc.Output(), "\n") {
		if strings.Contains(l, `"shutting down"`) || strings.Contains(l, "leadership") || strings.Contains(l, "raft did not shut down") || strings.Contains(l, `"stopped"`) {
			t.Logf("%s: %s", leader.id, l)
		}
	}
	if d := time.Duration(otherLeader.Load()); d > 0 {
		t.Logf("%s saw another leader %s after SIGTERM", healthy.id, d.Round(time.Millisecond))
	}
	if took > bound+slack {
		t.Errorf("leader %s took %s to exit after SIGTERM, over --stop-timeout %s + %s; meanwhile its heartbeats kept the tier from electing another leader", leader.id, took.Round(time.Millisecond), bound, slack)
	}

	if err := stuck.proc.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 90*time.Second, "a write accepted by the two survivors", func() error {
		return putHost(healthy, token, "after-stop")
	})
	t.Logf("survivors %s and %s accept writes %s after SIGTERM", healthy.id, stuck.id, time.Since(start).Round(time.Millisecond))
	stopWriters()
	<-watchDone

	// With every follower answering, a stop is clean: exit 0 in time.
	start = time.Now()
	if err := healthy.proc.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exitErr, exited = healthy.proc.Wait(bound + 40*time.Second)
	t.Logf("%s (clean stop) exited %s after SIGTERM (%v)", healthy.id, time.Since(start).Round(time.Millisecond), exitErr)
	if !exited || exitErr != nil || time.Since(start) > bound+slack {
		t.Errorf("%s: clean stop exited=%v err=%v after %s; want exit 0 within %s", healthy.id, exited, exitErr, time.Since(start), bound+slack)
	}
}

// replicationBlocked reports whether a replication goroutine of the
// process serving pprof at base waits on a follower: inside raft's
// netPipeline.AppendEntries (socket full or in-flight window full) or a
// plain AppendEntries RPC (dial, TLS handshake, write or read), as it does
// for a follower that stopped reading. Against a follower that answers,
// these calls take milliseconds.
func replicationBlocked(base string) bool {
	resp, err := http.Get(base + "/debug/pprof/goroutine?debug=2")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return false
	}
	for _, g := range strings.Split(string(b), "\n\n") {
		waits := strings.Contains(g, "[IO wait") || strings.Contains(g, "[select") || strings.Contains(g, "[chan send")
		replicating := strings.Contains(g, "raft.(*Raft).pipelineSend") || strings.Contains(g, "raft.(*Raft).replicateTo")
		onFollower := strings.Contains(g, "raft.(*netPipeline).AppendEntries") || strings.Contains(g, "raft.(*NetworkTransport).genericRPC")
		if waits && replicating && onFollower {
			return true
		}
	}
	return false
}

// leaderOf returns the member the others name as leader.
func leaderOf(t *testing.T, ms []*member, token string) *member {
	t.Helper()
	var leader *member
	testenv.Eventually(t, 60*time.Second, "a leader", func() error {
		var st wire.ClusterStatus
		if _, err := do("GET", ms[len(ms)-1].url()+"/v1/status", token, nil, &st); err != nil {
			return err
		}
		for _, m := range ms {
			if m.url() == st.Leader {
				leader = m
				return nil
			}
		}
		return fmt.Errorf("leader %q is not one of ours", st.Leader)
	})
	return leader
}
