package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// flowStep is one row of docs/flow.md's table.
type flowStep struct {
	line                      int
	num, file, recv, fn, from string
	text                      string
	decl                      *ast.FuncDecl
}

func (s flowStep) name() string {
	if s.recv == "" {
		return s.fn
	}
	return s.recv + "." + s.fn
}

// maxCallDepth bounds how many functions of the caller's package a
// "called from" claim may pass through (the caller itself not counted).
const maxCallDepth = 3

// inOrder is a step's claim that names are registered, or passed, in that
// order: "in this order: `a`, `b`, `c`".
var inOrder = regexp.MustCompile("in this order: ((?:`\\w+`(?:, )?)+)")

// checkFlowOrder checks the order docs/flow.md claims: a step that names
// the step it is called from is reached from that earlier step's
// function, through at most maxCallDepth functions of its package; a step
// that says "in this order:" names arguments of one call of its function
// in that order (the API's middleware).
func checkFlowOrder(t *testing.T, steps []flowStep) {
	t.Helper()
	byNum := map[string]flowStep{}
	for _, s := range steps {
		byNum[s.num] = s
	}
	pkgs := map[string]map[string][]*ast.FuncDecl{}
	for _, s := range steps {
		if s.decl == nil {
			continue
		}
		if s.from != "" {
			c, ok := byNum[s.from]
			a, _ := strconv.Atoi(s.from)
			b, _ := strconv.Atoi(s.num)
			switch {
			case !ok || c.decl == nil:
				t.Errorf("flow.md:%d: step %s is called from step %s, which the table lacks", s.line, s.num, s.from)
			case a >= b:
				t.Errorf("flow.md:%d: step %s is called from step %s, which does not come before it", s.line, s.num, s.from)
			default:
				dir := filepath.Dir(c.file)
				if pkgs[dir] == nil {
					pkgs[dir] = packageFuncs(t, dir)
				}
				if !reaches(pkgs[dir], c.decl, s) {
					t.Errorf("flow.md:%d: step %s (%s) is not called from step %s (%s in %s), directly or through %d functions of its package: fix the order or the \"from\" column of docs/flow.md",
						s.line, s.num, s.name(), c.num, c.name(), c.file, maxCallDepth)
				}
			}
		}
		if m := inOrder.FindStringSubmatch(s.text); m != nil {
			var want []string
			for _, w := range strings.Split(m[1], ", ") {
				want = append(want, strings.Trim(w, "`"))
			}
			if !callsInOrder(s.decl, want) {
				t.Errorf("flow.md:%d: step %s: no call in %s passes %s in this order: fix docs/flow.md", s.line, s.num, s.name(), strings.Join(want, ", "))
			}
		}
	}
}

// packageFuncs indexes by name the functions and methods declared in the
// non-test files of dir (relative to the repository root), and its
// package-level variables with a value, as functions whose body is that
// value: a dispatch table (the agent's actionTable) is followed like a
// function that calls each of its entries.
func packageFuncs(t *testing.T, dir string) map[string][]*ast.FuncDecl {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]*ast.FuncDecl{}
	fset := token.NewFileSet()
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(root, filepath.FromSlash(dir), n), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				out[fd.Name.Name] = append(out[fd.Name.Name], fd)
			}
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, sp := range g.Specs {
					vs := sp.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if i < len(vs.Values) {
							body := &ast.BlockStmt{List: []ast.Stmt{&ast.ExprStmt{X: vs.Values[i]}}}
							out[n.Name] = append(out[n.Name], &ast.FuncDecl{Name: n, Body: body})
						}
					}
				}
			}
		}
	}
	return out
}

// reaches reports whether from's body, or the body of a function of its
// package it refers to (up to maxCallDepth deep), refers to target: a
// method by a selector (x.fn, a call or a method value such as a handler
// or a middleware), a function by a call or as an argument.
func reaches(pkg map[string][]*ast.FuncDecl, from *ast.FuncDecl, target flowStep) bool {
	seen := map[*ast.FuncDecl]bool{from: true}
	level := []*ast.FuncDecl{from}
	for depth := 0; depth <= maxCallDepth && len(level) > 0; depth++ {
		var next []*ast.FuncDecl
		for _, fd := range level {
			names, hit := refs(fd, target)
			if hit {
				return true
			}
			for _, n := range names {
				for _, d := range pkg[n] {
					if !seen[d] {
						seen[d] = true
						next = append(next, d)
					}
				}
			}
		}
		level = next
	}
	return false
}

// refs lists the function names fd's body calls or passes, and the
// variables it indexes, and reports whether one of them is target.
func refs(fd *ast.FuncDecl, target flowStep) ([]string, bool) {
	var names []string
	hit := false
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch e := n.(type) {
		case *ast.SelectorExpr:
			names = append(names, e.Sel.Name)
			hit = hit || e.Sel.Name == target.fn
		case *ast.IndexExpr:
			if id, ok := e.X.(*ast.Ident); ok {
				names = append(names, id.Name)
			}
		case *ast.CallExpr:
			if id, ok := e.Fun.(*ast.Ident); ok {
				names = append(names, id.Name)
				hit = hit || (target.recv == "" && id.Name == target.fn)
			}
			for _, a := range e.Args {
				if id, ok := a.(*ast.Ident); ok {
					names = append(names, id.Name)
					hit = hit || (target.recv == "" && id.Name == target.fn)
				}
			}
		}
		return true
	})
	return names, hit
}

// callsInOrder reports whether one call in fd's body has arguments named
// want (x.name or name), in that order.
func callsInOrder(fd *ast.FuncDecl, want []string) bool {
	found := false
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok || found {
			return !found
		}
		i := 0
		for _, a := range c.Args {
			name := ""
			switch e := a.(type) {
			case *ast.Ident:
				name = e.Name
			case *ast.SelectorExpr:
				name = e.Sel.Name
			}
			if i < len(want) && name == want[i] {
				i++
			}
		}
		found = i == len(want)
		return !found
	})
	return found
}
