package agent_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// BenchmarkTakeoverRotation: a rack of 100 available hosts behind
// rackfence-bmcsim (20 ms per request) held by a real agent; the holder is
// killed (SIGKILL) and a second agent takes the rack over. Reports the
// time from the kill, and from the new lease, until every host is managed
// again (its status written under the new epoch, and with rotation its
// BMC account confirmed under it), the BMC requests per host in that
// time, and accounts locked out (must be 0); with rotation on and off.
//
//	go test -run '^$' -bench BenchmarkTakeoverRotation -benchtime 1x ./agent/
func BenchmarkTakeoverRotation(b *testing.B) {
	const hosts = 100
	for _, rot := range []bool{true, false} {
		b.Run(fmt.Sprintf("rotation=%v", rot), func(b *testing.B) {
			for range b.N {
				e := newEnv(b, envOpts{bmcs: hosts, latency: 20 * time.Millisecond})
				e.applyMany(b, hosts)
				args := []string{"--lease-ttl", "5s"}
				if rot {
					args = append(args, "--bmc-account-rotation")
				}
				_, a1 := e.timeToAvailable(b, hosts, "", args...)
				l1, err := e.admin.GetLease(ctx(b), "r1")
				if err != nil {
					b.Fatal(err)
				}
				if rot {
					e.waitAccounts(b, hosts, l1.Epoch)
				}
				before := e.simRequests(hosts)
				killed := time.Now()
				a1.Kill()
				e.startAgent("r1", "bench2", append([]string{"--log-level", "warn"}, args...)...)
				var granted time.Time
				var epoch uint64
				deadline := time.Now().Add(5 * time.Minute)
				for {
					if epoch == 0 {
						if l, err := e.admin.GetLease(ctx(b), "r1"); err == nil && l.Epoch > l1.Epoch {
							epoch, granted = l.Epoch, time.Now()
						}
					}
					if epoch != 0 && e.managedUnder(hosts, epoch, rot) {
						break
					}
					if time.Now().After(deadline) {
						b.Fatalf("not every host managed again 5 minutes after the kill")
					}
					time.Sleep(50 * time.Millisecond)
				}
				done := time.Now()
				reqs := e.simRequests(hosts) - before
				locked := 0
				for i := range hosts {
					locked += e.simLocked(b, i)
				}
				b.ReportMetric(done.Sub(killed).Seconds(), "s-from-kill")
				b.ReportMetric(done.Sub(granted).Seconds(), "s-from-lease")
				b.ReportMetric(float64(reqs)/hosts, "bmc-requests/host")
				b.ReportMetric(float64(locked), "lockouts")
				fmt.Printf("takeover of %d hosts, rotation %v, 20ms BMC latency, --lease-ttl 5s: every host managed again %.1f s after the kill, %.1f s after the new lease; %.1f BMC requests per host; %d accounts locked out\n",
					hosts, rot, done.Sub(killed).Seconds(), done.Sub(granted).Seconds(), float64(reqs)/hosts, locked)
			}
		})
	}
}

// waitAccounts waits until n hosts' BMC accounts are confirmed under epoch.
func (e *env) waitAccounts(b *testing.B, n int, epoch uint64) {
	deadline := time.Now().Add(5 * time.Minute)
	for !e.accountsUnder(n, epoch) {
		if time.Now().After(deadline) {
			b.Fatalf("not every BMC account confirmed under epoch %d", epoch)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (e *env) accountsUnder(n int, epoch uint64) bool {
	for i := range n {
		r, err := e.admin.GetBMCAccount(ctx(e.t), fmt.Sprintf("h%04d", i), false, 0)
		if err != nil || r.State != wire.BMCAccountConfirmed || r.Epoch != epoch {
			return false
		}
	}
	return true
}

// managedUnder: every host of r1 has its status written under epoch (and
// with rot its BMC account confirmed under it).
func (e *env) managedUnder(n int, epoch uint64, rot bool) bool {
	_, ok := e.stampedUnder(n, epoch, nil)
	return ok && (!rot || e.accountsUnder(n, epoch))
}

// simRequests sums the Redfish requests of BMCs 0..n-1.
func (e *env) simRequests(n int) int {
	s := 0
	for i := range n {
		st, err := e.simState(i)
		if err == nil {
			s += st.Requests
		}
	}
	return s
}

// simLocked counts BMC i's locked-out accounts (GET /sim/accounts).
func (e *env) simLocked(tb testing.TB, i int) int {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/sim/accounts", e.s.Base+i))
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Accounts []struct {
			Locked bool `json:"locked"`
		} `json:"accounts"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		tb.Fatal(err)
	}
	n := 0
	for _, a := range out.Accounts {
		if a.Locked {
			n++
		}
	}
	return n
}
