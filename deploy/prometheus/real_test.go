package prometheus

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
	"sigs.k8s.io/yaml"
)

// TestRulesFireOnRealMetrics scrapes a real rackfence-coordinator with a
// rack whose hosts nobody holds (r9) and a held rack with a host in error
// (r8), replays the scraped series through promtool, and checks that the
// rules fire for exactly those racks: the rules' metric and label names
// are the exporter's, not only the hand-written test series'.
func TestRulesFireOnRealMetrics(t *testing.T) {
	pt := promtool(t)
	c := rig.StartCoordinator(t, t.TempDir(), rig.CoordOpts{})
	ctx := rig.Ctx(t)
	c.Apply(&wire.Host{Name: "n1", Rack: "r9", Online: true})
	c.Apply(&wire.Host{Name: "n2", Rack: "r9", Online: true})
	c.Apply(&wire.Host{Name: "e1", Rack: "r8", Online: true})
	l, err := c.Admin.AcquireLease(ctx, "r8", wire.LeaseRequest{Holder: "probe", TTL: wire.Duration(5 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Admin.ReportStatus(ctx, "e1", wire.StatusReport{Epoch: l.Epoch, Status: wire.HostStatus{
		ProvisioningState: wire.StateRegistering, OperationalStatus: wire.OpError, ErrorType: wire.ErrRegistration, ErrorCount: 5}}); err != nil {
		t.Fatal(err)
	}

	var rf ruleFile
	readYAML(t, rulesFile, &rf)
	used := map[string]bool{}
	annotations := map[string]map[string]string{}
	raw, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var withAnn struct {
		Groups []struct {
			Rules []struct {
				Alert       string            `json:"alert"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(raw, &withAnn); err != nil {
		t.Fatal(err)
	}
	for _, g := range withAnn.Groups {
		for _, r := range g.Rules {
			annotations[r.Alert] = r.Annotations
		}
	}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			for _, ref := range metricRef.FindAllString(r.Expr, -1) {
				used[ref] = true
			}
		}
	}

	resp, err := testenv.HTTPClient(c.CAFile).Get(c.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var series []map[string]string
	seen := map[string]bool{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		sel, val := line[:i], line[i+1:]
		name := sel
		if j := strings.IndexByte(sel, '{'); j >= 0 {
			name = sel[:j]
		}
		if !used[name] {
			continue
		}
		seen[name] = true
		if strings.Contains(sel, "{") {
			sel = strings.Replace(sel, "{", `{instance="c1",`, 1)
		} else {
			sel += `{instance="c1"}`
		}
		series = append(series, map[string]string{"series": sel, "values": val + "x10"})
	}
	for _, need := range []string{"rackfence_rack_lease_held", "rackfence_rack_hosts", "rackfence_hosts_error", "rackfence_raft_leader"} {
		if !seen[need] {
			t.Fatalf("the coordinator's /metrics has no %s", need)
		}
	}

	render := func(alert string, labels map[string]string, value string) map[string]string {
		out := map[string]string{}
		for k, v := range annotations[alert] {
			for l, lv := range labels {
				v = strings.ReplaceAll(v, "{{ $labels."+l+" }}", lv)
			}
			out[k] = strings.TrimSpace(strings.ReplaceAll(v, "{{ $value }}", value))
		}
		return out
	}
	exp := func(alert string, labels map[string]string, value string) map[string]any {
		l := map[string]string{}
		for k, v := range labels {
			l[k] = v
		}
		return map[string]any{"exp_labels": l, "exp_annotations": render(alert, labels, value)}
	}
	tests := map[string]any{
		"rule_files":          []string{filepath.Join(mustAbs(t, "."), rulesFile)},
		"evaluation_interval": "1m",
		"tests": []any{map[string]any{
			"interval":     "1m",
			"input_series": series,
			"alert_rule_test": []any{
				map[string]any{"eval_time": "6m", "alertname": "RackfenceRackNoHolder",
					"exp_alerts": []any{exp("RackfenceRackNoHolder", map[string]string{"rack": "r9", "severity": "critical"}, "")}},
				map[string]any{"eval_time": "6m", "alertname": "RackfenceHostsInError",
					"exp_alerts": []any{exp("RackfenceHostsInError", map[string]string{"rack": "r8", "error_type": wire.ErrRegistration, "severity": "warning"}, "1")}},
				map[string]any{"eval_time": "6m", "alertname": "RackfenceNoRaftLeader", "exp_alerts": []any{}},
				map[string]any{"eval_time": "6m", "alertname": "RackfenceRackLeaseLost", "exp_alerts": []any{}},
				map[string]any{"eval_time": "6m", "alertname": "RackfencePivotStuck", "exp_alerts": []any{}},
			},
		}},
	}
	b, err := yaml.Marshal(tests)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "real.test.yml")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(pt, "test", "rules", f).CombinedOutput()
	if err != nil {
		names := make([]string, 0, len(seen))
		for n := range seen {
			names = append(names, n)
		}
		sort.Strings(names)
		t.Fatalf("promtool test rules on the scraped series (%v): %v\n%s\n--- test file:\n%s", names, err, out, b)
	}
	t.Logf("%d scraped series replayed; %s", len(series), strings.TrimSpace(string(out)))
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(fmt.Errorf("abs %s: %w", p, err))
	}
	return a
}
