package agent_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/procstat"
)

// BenchmarkTakeoverCost: a rack of 1,000 available hosts behind
// rackfence-bmcsim (no added latency), held by a real agent that is
// stopped (SIGTERM: it releases the lease); a second agent takes the rack
// over. Reports, from the stop until every host carries the new epoch:
// the seconds (the release and the second agent's start included), the
// coordinator's CPU, and the hosts whose
// modifiedIndex moved (a full status write; each wakes the rack's
// watchers and adds the whole status to the Raft log, where a touch adds
// the host's name and index). Run it against two builds' binaries with
// RACKFENCE_BIN to compare them:
//
//	go test -run '^$' -bench BenchmarkTakeoverCost -benchtime 1x ./agent/
func BenchmarkTakeoverCost(b *testing.B) {
	const hosts = 1000
	for range b.N {
		e := newEnv(b, envOpts{bmcs: hosts})
		e.applyMany(b, hosts)
		_, a1 := e.timeToAvailable(b, hosts, "")
		time.Sleep(2 * time.Second) // the first writes settle
		l1, err := e.admin.GetLease(ctx(b), "r1")
		if err != nil {
			b.Fatal(err)
		}
		before := map[string]uint64{}
		list, err := e.admin.ListHosts(ctx(b), client.HostFilter{Rack: "r1"})
		if err != nil {
			b.Fatal(err)
		}
		for _, h := range list.Items {
			before[h.Name] = h.ModifiedIndex
		}
		pid := e.coord.Cmd.Process.Pid
		cpu0, stopped := procstat.CPUSeconds(pid), time.Now()
		if err := a1.Signal(syscall.SIGTERM); err != nil {
			b.Fatal(err)
		}
		if _, ok := a1.Wait(time.Minute); !ok {
			b.Fatal("the first agent did not stop within a minute of SIGTERM")
		}
		e.startAgent("r1", "bench2", "--log-level", "warn")
		var epoch uint64
		deadline := time.Now().Add(5 * time.Minute)
		moved := 0
		for {
			if epoch == 0 {
				if l, err := e.admin.GetLease(ctx(b), "r1"); err == nil && l.Epoch > l1.Epoch {
					epoch = l.Epoch
				}
			}
			if epoch != 0 {
				if n, ok := e.stampedUnder(hosts, epoch, before); ok {
					moved = n
					break
				}
			}
			if time.Now().After(deadline) {
				b.Fatal("not every host carries the new epoch 5 minutes after the first agent stopped")
			}
			time.Sleep(100 * time.Millisecond)
		}
		took, cpu := time.Since(stopped), procstat.CPUSeconds(pid)-cpu0
		b.ReportMetric(took.Seconds(), "s-from-stop")
		b.ReportMetric(cpu, "coordinator-CPU-s")
		b.ReportMetric(float64(moved), "hosts-rewritten")
		fmt.Printf("takeover of %d available hosts: every host under the new epoch %.2f s after the first agent's stop; coordinator CPU %.2f s (this benchmark's list of the rack every 0.1 s included); %d hosts written in full (modifiedIndex moved)\n",
			hosts, took.Seconds(), cpu, moved)
	}
}

// stampedUnder reports whether r1 has at least n hosts and every one has
// an operational status written under epoch, and how many of them have a
// modifiedIndex other than in before.
func (e *env) stampedUnder(n int, epoch uint64, before map[string]uint64) (moved int, ok bool) {
	l, err := e.admin.ListHosts(ctx(e.t), client.HostFilter{Rack: "r1"})
	if err != nil || len(l.Items) < n {
		return 0, false
	}
	for _, h := range l.Items {
		if h.Status == nil || h.Status.Epoch != epoch || h.Status.OperationalStatus != wire.OpOK {
			return 0, false
		}
		if h.ModifiedIndex != before[h.Name] {
			moved++
		}
	}
	return moved, true
}
