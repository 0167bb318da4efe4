package agent

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/agent/hoststate"
)

// Every Action constant the host state machine declares (but ActionNone)
// has an entry in actionTable, and the table has no other: a new action
// is one entry there, and this test names the one forgotten.
func TestActionTableCoversHoststate(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join("hoststate", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("hoststate sources: %v", err)
	}
	declared := map[hoststate.Action]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, sp := range g.Specs {
				vs := sp.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Action" || len(vs.Values) != len(vs.Names) {
					continue
				}
				for i, n := range vs.Names {
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || !n.IsExported() {
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					if a := hoststate.Action(v); a != hoststate.ActionNone {
						declared[a] = true
					}
				}
			}
		}
	}
	if len(declared) == 0 {
		t.Fatal("found no Action constants in agent/hoststate")
	}
	for a := range declared {
		if actionTable[a] == nil {
			t.Errorf("hoststate declares action %q but actionTable (agent/action_table.go) has no entry for it", a)
		}
	}
	for a := range actionTable {
		if !declared[a] {
			t.Errorf("actionTable has an entry for %q, which hoststate does not declare", a)
		}
	}
}
