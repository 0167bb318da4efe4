package agent_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/procstat"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// BenchmarkRegistrationCost: a real rackfence-agent (its defaults, the
// direct provisioner) takes 200 new hosts behind one rackfence-bmcsim
// (default profile, plain HTTP, no added latency: what the fleet bench
// runs) from registration to available. Reports the agent's CPU per host
// until all are available (ms-cpu/host: CPU seconds, not wall time, so
// the figure holds on a busy machine) and the Redfish requests per host
// the simulator answered in that time (req/host) and the TCP connections
// the agent opened to it (conns/host: what the simulator accepted, less
// the one this benchmark's own /sim/state read of each BMC opens on the
// BMC's port), and prints the GETs per
// host by path. RACKFENCE_BENCH_HOSTS=N takes N hosts instead. With
// RACKFENCE_BENCH_CPUPROFILE=FILE it also writes the
// agent's CPU profile over the registration to FILE (go tool pprof -top
// -cum FILE).
//
//	make build && RACKFENCE_BIN=$PWD/bin go test -run '^$' -bench RegistrationCost -benchtime 3x ./agent/
func BenchmarkRegistrationCost(b *testing.B) {
	hosts := envCount("RACKFENCE_BENCH_HOSTS", 200)
	for range b.N {
		e := newEnv(b, envOpts{bmcs: hosts})
		e.applyMany(b, hosts)
		maddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(b, "127.0.0.1"))
		args := []string{"--metrics-addr", maddr}
		prof := os.Getenv("RACKFENCE_BENCH_CPUPROFILE")
		if prof != "" {
			args = append(args, "--pprof")
		}
		profDone := make(chan struct{})
		if prof != "" {
			go func() {
				defer close(profDone)
				deadline := time.Now().Add(30 * time.Second)
				for time.Now().Before(deadline) {
					resp, err := http.Get("http://" + maddr + "/debug/pprof/profile?seconds=8")
					if err != nil {
						time.Sleep(5 * time.Millisecond)
						continue
					}
					defer resp.Body.Close()
					f, err := os.Create(prof)
					if err == nil {
						_, _ = io.Copy(f, resp.Body)
						_ = f.Close()
					}
					return
				}
			}()
		} else {
			close(profDone)
		}
		_, agent := e.timeToAvailable(b, hosts, "", args...)
		cpu := procstat.CPUSeconds(agent.Cmd.Process.Pid)
		reqs, conns, gets := 0, 0, map[string]int{}
		for i := range hosts {
			st, err := e.simState(i)
			if err != nil {
				b.Fatal(err)
			}
			reqs += st.Requests
			// The state read arrives on the BMC's own port, over a new
			// connection the simulator counted before answering.
			conns += st.Connections - 1
			for p, n := range st.Gets {
				gets[p] += n
			}
		}
		<-profDone
		b.ReportMetric(cpu*1000/float64(hosts), "ms-cpu/host")
		b.ReportMetric(float64(reqs)/float64(hosts), "req/host")
		b.ReportMetric(float64(conns)/float64(hosts), "conns/host")
		paths := make([]string, 0, len(gets))
		nget := 0
		for p, n := range gets {
			paths = append(paths, p)
			nget += n
		}
		sort.Slice(paths, func(i, j int) bool { return gets[paths[i]] > gets[paths[j]] })
		fmt.Printf("%d hosts to available: agent CPU %.2f ms/host, %.2f Redfish requests/host (%.2f GETs, %.2f other), %.2f connections/host\n",
			hosts, cpu*1000/float64(hosts), float64(reqs)/float64(hosts), float64(nget)/float64(hosts), float64(reqs-nget)/float64(hosts), float64(conns)/float64(hosts))
		for _, p := range paths {
			fmt.Printf("  GET %-70s %.2f/host\n", p, float64(gets[p])/float64(hosts))
		}
	}
}
