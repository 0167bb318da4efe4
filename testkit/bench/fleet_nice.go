package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// A fleet run puts the coordinator, 100 agents and the simulated BMCs on
// one machine, where in a real fleet the coordinator has machines of its
// own. With FleetConfig.FleetNice the agents and simulators run at that
// nice value and the coordinator at 0: the kernel then serves the
// coordinator first when it is runnable, as its own cores would, and the
// agents and BMCs take what is left. At 100,000 hosts on 2 cores, without
// it the coordinator got about 0.3 of a core while 100 agents and 11
// simulators kept the load average above 30, its Raft applies waited
// seconds for a CPU, and rack lease renewals timed out.

// niceArgs returns bin and args to start bin at f.cfg.FleetNice ("nice"
// execs bin, so the process keeps the pid started; every thread the Go
// runtime starts inherits the value).
func (f *fleet) niceArgs(bin string, args []string) (string, []string) {
	if f.cfg.FleetNice == 0 {
		return bin, args
	}
	return "nice", append([]string{"-n", strconv.Itoa(f.cfg.FleetNice), bin}, args...)
}

// CheckFleetNice refuses a nice value outside 0 (off) to 19 (the load
// tool's flag check and Fleet's).
func CheckFleetNice(n int) error {
	if n < 0 || n > 19 {
		return fmt.Errorf("--fleet-nice %d: use 1 to 19 (the agents and simulators run at that nice value, the coordinator at 0), or 0 for all at the same priority", n)
	}
	return nil
}

// leaseLossLine is what an agent logs each time it loses its rack lease
// (agent/agent.go).
var leaseLossLine = []byte(`"msg":"lost the rack lease`)

// leaseLosses counts the rack leases the agents lost so far, from their
// logs: each loss drops the agent's host state and its next session
// writes every host's status again.
func (f *fleet) leaseLosses() int {
	n := 0
	for _, a := range f.agents {
		n += countLines(a.log, leaseLossLine)
	}
	return n
}

// countLines counts the lines of the file at path that contain sub.
func countLines(path string, sub []byte) int {
	fh, err := os.Open(filepath.Clean(path))
	if err != nil {
		return 0
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	n := 0
	for sc.Scan() {
		if bytes.Contains(sc.Bytes(), sub) {
			n++
		}
	}
	return n
}
