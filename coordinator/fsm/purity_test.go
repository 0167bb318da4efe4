package fsm

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The FSM's determinism is structure, not prose: every member applies the
// same entries to the same state, so Apply must not read a clock, draw a
// random number or do I/O (the leader stamps times into commands), and
// Raft's wiring lives in coordinator/, not here. These tests keep it so.

// clockCalls are the functions of package time that read or wait on the
// clock. time's types and pure functions (time.Duration, t.Add, t.Truncate)
// stay allowed.
var clockCalls = map[string]bool{
	"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
	"AfterFunc": true, "Tick": true, "NewTimer": true, "NewTicker": true,
}

// bannedImports may not be imported by the FSM's own files: randomness,
// I/O to the system or the network, and Raft's wiring.
var bannedImports = []string{
	"math/rand", "math/rand/v2", "crypto/rand",
	"os", "os/exec", "os/signal", "syscall", "io/ioutil", "net", "net/http",
	"github.com/hashicorp/raft", // and every path below it
	"github.com/hashicorp/raft-boltdb", "github.com/hashicorp/raft-wal", "go.etcd.io/bbolt",
}

// wiring may not be reached at all, however indirectly: the FSM is driven
// by coordinator/'s adapter (coordinator/raftfsm.go), never the other way round.
var wiring = []string{
	"github.com/hashicorp/raft", "github.com/hashicorp/raft-boltdb", "github.com/hashicorp/raft-wal",
	"go.etcd.io/bbolt", "github.com/prometheus/client_golang", "github.com/labstack/echo",
	"github.com/rackfence/rackfence/coordinator", // the wiring package itself (not coordinator/fsm)
}

// knownImpure are this module's packages the FSM imports (for their types)
// that themselves import a banned package, each with the reason. The FSM
// calls none of what makes them impure. A package that no longer needs
// its entry fails the test, so the list only shrinks.
var knownImpure = map[string]string{
	// shared/wire validates addresses with net's parsers (no I/O); the FSM
	// uses its types and error codes.
	"github.com/rackfence/rackfence/shared/wire net": "address parsing in validation",
	// shared/seal seals on the leader (a random nonce); the FSM only holds
	// the sealed bytes (seal.Sealed).
	"github.com/rackfence/rackfence/shared/seal crypto/rand": "nonces, drawn by the leader when it seals",
	"github.com/rackfence/rackfence/shared/seal os":          "the key file, read by the wiring",
	"github.com/rackfence/rackfence/shared/seal syscall":     "the key file's owner check, by the wiring",
}

func banned(path string) bool {
	for _, b := range bannedImports {
		if path == b || (b == "github.com/hashicorp/raft" && strings.HasPrefix(path, b+"/")) {
			return true
		}
	}
	return false
}

// impurities lists, for one Go source file, every banned import and every
// reference to a clock function of package time (called or not, through
// whatever name the file imports time as).
func impurities(fset *token.FileSet, f *ast.File) []string {
	var out []string
	timeNames := map[string]bool{}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if banned(p) {
			out = append(out, fmt.Sprintf("%s: imports %s", fset.Position(im.Pos()), p))
		}
		if p == "time" {
			name := "time"
			if im.Name != nil {
				name = im.Name.Name
			}
			timeNames[name] = true
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && timeNames[x.Name] && x.Obj == nil && clockCalls[sel.Sel.Name] {
			out = append(out, fmt.Sprintf("%s: reads the clock (%s.%s)", fset.Position(sel.Pos()), x.Name, sel.Sel.Name))
		}
		return true
	})
	return out
}

// TestFSMIsPure: no file of the package (tests aside) reads the clock,
// draws random numbers, does I/O or imports Raft.
func TestFSMIsPure(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, v := range impurities(fset, f) {
			t.Errorf("%s: the FSM must be deterministic (the leader stamps times into commands; the wiring lives in coordinator/)", v)
		}
	}
	if checked < 20 {
		t.Fatalf("checked %d files: the scan is broken", checked)
	}
}

// TestPurityCheckFinds: the check above finds what it is for, whatever
// name time is imported as, and leaves time's types and pure functions.
func TestPurityCheckFinds(t *testing.T) {
	src := `package fsm

import (
	"math/rand"
	clock "time"
	"github.com/hashicorp/raft/x"
)

func a() clock.Time { return clock.Now() }
func b() { f := clock.Since; _ = f; <-clock.After(1) }
func c(t clock.Time) clock.Time { return t.Add(clock.Duration(rand.Int())).Truncate(clock.Minute) }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "planted.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := impurities(fset, f)
	want := []string{"imports math/rand", "imports github.com/hashicorp/raft/x", "(clock.Now)", "(clock.Since)", "(clock.After)"}
	if len(got) != len(want) {
		t.Fatalf("found %d, want %d: %q", len(got), len(want), got)
	}
	for _, w := range want {
		if !strings.Contains(strings.Join(got, "\n"), w) {
			t.Errorf("missed %s in %q", w, got)
		}
	}
}

// TestFSMImportGraph: nothing the FSM imports, however indirectly, is
// Raft's wiring, and this module's packages it imports import nothing
// banned beyond knownImpure.
func TestFSMImportGraph(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the import graph is read with go list, and there is no go command in PATH: %v", err)
	}
	out, err := exec.Command(gobin, "list", "-deps", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const module = "github.com/rackfence/rackfence/"
	used := map[string]bool{}
	var deps int
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, "|")
		deps++
		for _, w := range wiring {
			if pkg == w || strings.HasPrefix(pkg, w+"/") && !strings.HasPrefix(pkg, module+"coordinator/fsm") {
				t.Errorf("the FSM depends on %s: the Raft wiring belongs in coordinator/ (raftfsm.go drives the FSM)", pkg)
			}
		}
		if !strings.HasPrefix(pkg, module) || pkg == module+"coordinator/fsm" {
			continue
		}
		for _, im := range strings.Fields(imports) {
			if !banned(im) {
				continue
			}
			key := pkg + " " + im
			if _, ok := knownImpure[key]; ok {
				used[key] = true
				continue
			}
			t.Errorf("%s, which the FSM imports, imports %s: keep it out, or list it in knownImpure with why the FSM never reaches it", pkg, im)
		}
	}
	if deps < 10 {
		t.Fatalf("go list gave %d packages: the scan is broken", deps)
	}
	var stale []string
	for k := range knownImpure {
		if !used[k] {
			stale = append(stale, k)
		}
	}
	sort.Strings(stale)
	for _, k := range stale {
		t.Errorf("knownImpure lists %q, which no longer holds: remove it", k)
	}
}
