package main

import (
	"fmt"
	"os"
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
// SIGTERM while its replication to one follower is stuck (that follower is
// SIGSTOPped under a stream of writes, so the leader's pipeline to it fills
// and blocks). The leader must exit within --stop-timeout (plus slack for a
// loaded machine), and once the stuck follower resumes the two survivors
// must elect a leader that accepts writes.
//
// The bound is passed as RACKFENCE_STOP_TIMEOUT, which a binary without the
// setting ignores, so the same test measures a binary from before it.
func TestStopLeaderWithStuckFollower(t *testing.T) {
	bin := testenv.Binary(t, "rackfence-coordinator")
	const bound = 5 * time.Second
	ms, token := startCluster(t, bin, 3, "RACKFENCE_STOP_TIMEOUT="+bound.String())
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
	// entries for the stopped one pile up in the leader's pipeline.
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
	testenv.Eventually(t, 60*time.Second, "writes committed without the stopped follower", func() error {
		if n := acked.Load(); n < 1000 {
			return fmt.Errorf("%d acknowledged", n)
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
		t.Fatalf("leader %s still running %s after SIGTERM (--stop-timeout %s); its heartbeats kept the tier from electing another leader", leader.id, took.Round(time.Millisecond), bound)
	}
	t.Logf("leader %s exited %s after SIGTERM (%v); %d writes acknowledged before", leader.id, took.Round(time.Millisecond), exitErr, acked.Load())
	if d := time.Duration(otherLeader.Load()); d > 0 {
		t.Logf("%s saw leader %s %s after SIGTERM (before the exit)", healthy.id, "other than "+leader.id, d.Round(time.Millisecond))
	}
	out := leader.proc.Output()
	if os.Getenv("STOPTEST_DUMP") != "" {
		t.Logf("leader output:\n%s", out)
	}
	if !strings.Contains(out, "shutting down") {
		t.Errorf("leader did not log its shutdown:\n%s", out)
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

func raftLogLevel() string {
	if l := os.Getenv("STOPTEST_RAFTLOG"); l != "" {
		return l
	}
	return "error"
}
