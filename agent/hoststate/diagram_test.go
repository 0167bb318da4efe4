package hoststate

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/hoststate.md from the table")

const diagramPath = "../../docs/hoststate.md"

func TestDiagramUpToDate(t *testing.T) {
	want := Diagram()
	if *update {
		if err := os.MkdirAll(filepath.Dir(diagramPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(diagramPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(diagramPath)
	if err != nil {
		t.Fatalf("read %s: %v (run: go generate ./agent/hoststate)", diagramPath, err)
	}
	if string(got) != want {
		t.Fatalf("%s is out of date with table.go: run `go generate ./agent/hoststate` and commit it", diagramPath)
	}
}

func TestDiagramCoversEveryRowAndState(t *testing.T) {
	d := Diagram()
	for _, w := range table {
		if !strings.Contains(d, "| "+w.name) {
			t.Errorf("rule %s missing from the diagram's rule list", w.name)
		}
	}
	for _, s := range []string{sUnmanaged, sRegistering, sInspecting, sAvailable, sProvisionin, sProvisioned, sExternal, sDeprovision, sPowerOffDel, sDeleting} {
		if !strings.Contains(d, "state \""+s+"\"") {
			t.Errorf("state %s has no edge in the diagram", s)
		}
	}
}

func TestTableRowNamesUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, w := range table {
		if seen[w.name] {
			t.Errorf("duplicate rule name %s", w.name)
		}
		seen[w.name] = true
		if w.why == "" {
			t.Errorf("rule %s has no why", w.name)
		}
	}
}

// TestWhyIsOperatorText: a rule's why becomes an event message and a line
// of docs/hoststate.md, so it must not name our design documents (seed
// proposals, issues, BMO); those go in the row's src.
func TestWhyIsOperatorText(t *testing.T) {
	design := regexp.MustCompile(`(?i)\bseed \d|\bissue[ -]?\d|\bBMO\b`)
	for _, w := range table {
		if design.MatchString(w.why) {
			t.Errorf("rule %s: why names a design document (move it to src): %q", w.name, w.why)
		}
	}
}
