package prometheus

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const (
	rulesFile     = "rackfence-rules.yml"
	rulesTestFile = "rackfence-rules.test.yml"
	dashboardFile = "grafana-dashboard.json"
)

// promtool finds promtool (Debian package prometheus, installed by
// deploy/peers/install.sh); without it the test fails under CI=true and
// skips loudly otherwise.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("promtool is not installed (CI=true): bash deploy/peers/install.sh installs Debian's prometheus package")
		}
		t.Skip("SKIPPED: promtool is not installed, so the alert rules are NOT checked; install it with bash deploy/peers/install.sh (Debian package prometheus)")
	}
	return p
}

// TestRulesPromtool checks the rules' syntax and runs their unit tests.
func TestRulesPromtool(t *testing.T) {
	pt := promtool(t)
	for _, args := range [][]string{{"check", "rules", rulesFile}, {"test", "rules", rulesTestFile}} {
		out, err := exec.Command(pt, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		} else {
			t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
		}
	}
}

type ruleFile struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Alert  string `json:"alert"`
			Record string `json:"record"`
			Expr   string `json:"expr"`
		} `json:"rules"`
	} `json:"groups"`
}

type ruleTests struct {
	Tests []struct {
		InputSeries []struct {
			Series string `json:"series"`
		} `json:"input_series"`
		AlertRuleTest []struct {
			Alertname string `json:"alertname"`
			ExpAlerts []any  `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

func readYAML(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

var (
	metricRef = regexp.MustCompile(`\brackfence_[a-z0-9_]+`)
	// A string literal naming a metric in the exporters' Go source.
	metricLit = regexp.MustCompile(`"(rackfence_[a-z0-9_]+)"`)
)

// exported lists the metric names the binaries' Go source declares
// (coordinator, agent, API, raft sink). Runtime tests check that they
// really appear on /metrics: coordinator/metrics_fleet_test.go,
// coordinator/api (TestOpenAPIResponses), agent (TestDrain,
// TestTwoAgentsFencing), raftprom and TestRaftTimingsOnMetrics.
func exported(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range metricLit.FindAllSubmatch(b, -1) {
			names[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 30 {
		t.Fatalf("only %d metric names found in the Go source; the scan is broken: %v", len(names), names)
	}
	return names
}

// known reports whether a referenced name is exported, allowing the
// series Prometheus derives from a histogram.
func known(names map[string]bool, ref string) bool {
	if names[ref] {
		return true
	}
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(ref, suf); ok && names[base] {
			return true
		}
	}
	return false
}

// TestRulesAndDashboardNameRealMetrics fails when a rule, a rule test's
// input series or a dashboard panel names a metric no binary exports,
// and when an alert has no promtool test that expects it to fire.
func TestRulesAndDashboardNameRealMetrics(t *testing.T) {
	names := exported(t)
	var rf ruleFile
	readYAML(t, rulesFile, &rf)
	alerts := map[string]bool{}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				names[r.Record] = true
			}
			if r.Alert != "" {
				alerts[r.Alert] = true
			}
		}
	}
	check := func(where, expr string) {
		refs := metricRef.FindAllString(expr, -1)
		if len(refs) == 0 {
			t.Errorf("%s names no rackfence metric: %s", where, expr)
		}
		for _, ref := range refs {
			if !known(names, ref) {
				t.Errorf("%s names %s, which no binary exports", where, ref)
			}
		}
	}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			check(rulesFile+" "+r.Alert+r.Record, r.Expr)
		}
	}

	var rt ruleTests
	readYAML(t, rulesTestFile, &rt)
	firing := map[string]bool{}
	for _, tc := range rt.Tests {
		for _, s := range tc.InputSeries {
			check(rulesTestFile+" input series", s.Series)
		}
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				firing[a.Alertname] = true
			}
		}
	}
	var untested []string
	for a := range alerts {
		if !firing[a] {
			untested = append(untested, a)
		}
	}
	sort.Strings(untested)
	if len(untested) > 0 {
		t.Errorf("alerts with no promtool test that expects them to fire: %v", untested)
	}

	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Type    string `json:"type"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("%s is not valid JSON: %v", dashboardFile, err)
	}
	if dash.Title == "" || dash.UID == "" {
		t.Errorf("%s has no title or uid", dashboardFile)
	}
	used := map[string]bool{}
	graphs := 0
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		graphs++
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			check(dashboardFile+" panel "+p.Title, tg.Expr)
			for _, ref := range metricRef.FindAllString(tg.Expr, -1) {
				used[ref] = true
			}
		}
	}
	// The dashboard shows what the alerts watch.
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			for _, ref := range metricRef.FindAllString(r.Expr, -1) {
				if !used[ref] {
					t.Errorf("alert %s watches %s, which no dashboard panel shows", r.Alert, ref)
				}
			}
		}
	}
	t.Logf("%d alerts, %d dashboard panels, %d exported metric names", len(alerts), graphs, len(names))
}

// The check above can fail: a made-up name is not known.
func TestKnownRejectsUnknownNames(t *testing.T) {
	names := map[string]bool{"rackfence_apply_seconds": true}
	for ref, want := range map[string]bool{"rackfence_apply_seconds": true, "rackfence_apply_seconds_bucket": true,
		"rackfence_apply_second": false, "rackfence_nothing_total": false, "rackfence_apply_seconds_bucket_count": false} {
		if got := known(names, ref); got != want {
			t.Errorf("known(%s) = %v, want %v", ref, got, want)
		}
	}
}
