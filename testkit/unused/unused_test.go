package unused

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/testkit/testenv"
)

// allowed are exported functions nothing in the module calls outside
// tests that stay on purpose, each with the reason. Keep it short: anything else unused is
// dead code to delete.
var allowed = map[string]string{
	// Accessors only tests read, but tests of other packages, which a
	// _test.go file of the declaring package cannot serve.
	"github.com/rackfence/rackfence/agent/guard.MemoryAudit.Records":  "the audit sink agent/bmc's and agent/provisioner/direct's tests read",
	"github.com/rackfence/rackfence/internal/procnet.ConnectedTo":     "read by agent's end-to-end test (a connection kept to the coordinator)",
	"github.com/rackfence/rackfence/coordinator/fsm.FSM.WatchAnswers": "the count of built watch answers coordinator/api's fan-out test reads (one answer per change, whatever the watchers)",
}

// TestNoUnusedExports fails on an exported function or method that
// nothing in the module outside _test.go files refers to, outside the allowed
// list: delete it, or add it to allowed with the reason it stays.
func TestNoUnusedExports(t *testing.T) {
	testenv.SkipShort(t) // type-checks the whole module: about 40 s
	root, err := filepath.Abs(testenv.Root())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at the module root %s: %v", root, err)
	}
	found, err := Find(root, "./...")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range found {
		seen[f.Name] = true
		if _, ok := allowed[f.Name]; !ok {
			t.Errorf("%s: delete it, or list it in allowed (testkit/unused/unused_test.go) with the reason it stays", f)
		}
	}
	for name := range allowed {
		if !seen[name] {
			t.Errorf("allowed lists %s, which is gone or now used: remove it from the list", name)
		}
	}
}

// TestFindReportsUnused: on the fixture module, exactly the exported
// functions nothing outside tests refers to are reported (the one only a
// test calls among them); the generic one and the methods called through
// an interface or by package errors are not.
func TestFindReportsUnused(t *testing.T) {
	found, err := Find(filepath.Join("testdata", "fixture"), "./...")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range found {
		names = append(names, f.Name)
		if !strings.Contains(f.Pos, filepath.Join("lib", "lib.go")+":") {
			t.Errorf("%s: position %q is not in lib/lib.go", f.Name, f.Pos)
		}
	}
	want := []string{"example.com/fixture/lib.T.Forgotten", "example.com/fixture/lib.Unused", "example.com/fixture/lib.UsedByTest"}
	if !slices.Equal(names, want) {
		t.Fatalf("Find reported %q, want %q", names, want)
	}
}
