package chaos

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Campaign totals the results of several runs.
type Campaign struct {
	Runs        int            `json:"runs"`
	Minutes     float64        `json:"minutes"` // workload minutes, summed
	Faults      map[string]int `json:"faults"`
	Ops         int            `json:"ops"`
	OpsInfo     int            `json:"opsInfo"`
	Mutations   int            `json:"mutations"`
	ByChecker   map[string]int `json:"violationsByChecker"`
	Failed      []int64        `json:"failedSeeds"`
	ConvergeP50 int64          `json:"convergeP50Millis"` // over every host of every run
	ConvergeMax int64          `json:"convergeMaxMillis"`
	// Credentials totals the bmc-credentials checker's counts of the
	// runs with rotation on (nil: none).
	Credentials *CredentialsResult `json:"bmcCredentials,omitempty"`
}

// Total sums results.
func Total(rs []*Result) Campaign {
	c := Campaign{Faults: map[string]int{}, ByChecker: map[string]int{}}
	var ms []int64
	for _, r := range rs {
		c.Runs++
		if d, err := time.ParseDuration(r.Duration); err == nil {
			c.Minutes += d.Minutes()
		}
		for k, v := range r.Faults {
			c.Faults[k] += v
		}
		c.Ops += r.Ops
		c.OpsInfo += r.OpsByResult[ResultInfo]
		c.Mutations += r.Mutations
		for k, v := range r.ByChecker {
			c.ByChecker[k] += v
		}
		if !r.OK() {
			c.Failed = append(c.Failed, r.Seed)
		}
		for _, v := range r.Converge {
			ms = append(ms, v)
		}
		if cr := r.Credentials; cr != nil {
			if c.Credentials == nil {
				c.Credentials = &CredentialsResult{}
			}
			t := c.Credentials
			t.Checked, t.Rotations, t.Refused, t.Lockouts = t.Checked+cr.Checked, t.Rotations+cr.Rotations, t.Refused+cr.Refused, t.Lockouts+cr.Lockouts
			t.Hosts, t.Pending, t.Disabled = t.Hosts+cr.Hosts, t.Pending+cr.Pending, t.Disabled+cr.Disabled
		}
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i] < ms[j] })
	if len(ms) > 0 {
		c.ConvergeP50, c.ConvergeMax = ms[len(ms)/2], ms[len(ms)-1]
	}
	return c
}

// ReadResults reads every DIR/*/result.json under dir.
func ReadResults(dir string) ([]*Result, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "result.json"))
	if err != nil {
		return nil, err
	}
	var out []*Result
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var r Result
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, &r)
	}
	return out, nil
}

func (c Campaign) String() string {
	var b strings.Builder
	n := 0
	var kinds []string
	for k, v := range c.Faults {
		kinds = append(kinds, fmt.Sprintf("%s=%d", k, v))
		n += v
	}
	sort.Strings(kinds)
	fmt.Fprintf(&b, "campaign: %d runs, %.0f workload minutes\n", c.Runs, c.Minutes)
	fmt.Fprintf(&b, "faults: %d (%s)\n", n, strings.Join(kinds, " "))
	fmt.Fprintf(&b, "operations checked: %d (%d ambiguous); BMC mutations checked: %d\n", c.Ops, c.OpsInfo, c.Mutations)
	for _, ch := range Checkers {
		fmt.Fprintf(&b, "checker %-16s %d violations\n", ch, c.ByChecker[ch])
	}
	fmt.Fprintf(&b, "convergence after the final heal, all hosts: p50 %d ms, max %d ms\n", c.ConvergeP50, c.ConvergeMax)
	if cr := c.Credentials; cr != nil {
		fmt.Fprintf(&b, "fence at the BMC: %d accepted mutations traced to their credentials, %d rotations, %d refused (401), %d lockouts; %d hosts with a working password (%d pending, %d accounts disabled)\n",
			cr.Checked, cr.Rotations, cr.Refused, cr.Lockouts, cr.Hosts, cr.Pending, cr.Disabled)
	}
	if len(c.Failed) > 0 {
		fmt.Fprintf(&b, "failed seeds: %v\n", c.Failed)
	}
	return b.String()
}
