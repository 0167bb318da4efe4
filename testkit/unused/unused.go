// Package unused reports exported functions and methods that nothing in
// the module calls or refers to outside _test.go files: dead code that
// the compiler cannot see because the name is exported. A function only
// tests call is reported too: the binaries do not need it, so it moves
// into a _test.go file (an export_test.go of its package) or goes. Uses
// by tests still count for what exists for tests (testSupport): test
// helper packages and TestOnly hooks. It type-checks the
// module with golang.org/x/tools/go/packages and matches each use
// (types.Info.Uses) to a declaration by source position, so a name used
// in one package does not hide the same name unused in another.
//
// A method is also counted as used when its name is a method of an
// interface type any loaded package (dependencies included) declares, of
// error, or one package errors calls by name (Is, As, Unwrap): it may be
// called through that interface (fmt's String, a raft.FSM's Apply,
// http.Handler's ServeHTTP). That errs on the side of reporting too
// little, never a method a caller needs.
package unused

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Finding is one exported function or method nothing refers to.
type Finding struct {
	// Name is package path, then Func or Type.Method:
	// "github.com/x/y/pkg.Func", "github.com/x/y/pkg.T.Method".
	Name string
	// Pos is file:line of the declaration.
	Pos string
}

func (f Finding) String() string { return f.Pos + ": " + f.Name + " is exported but unused" }

// Find loads patterns (e.g. "./...") in dir with their tests and returns
// the exported functions and methods declared outside _test.go files that
// nothing outside _test.go files refers to, sorted by Name.
func Find(dir string, patterns ...string) ([]Finding, error) {
	fset := token.NewFileSet()
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
			packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports,
		Dir:   dir,
		Fset:  fset,
		Tests: true,
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, fmt.Errorf("load %v in %s: %w", patterns, dir, err)
	}
	var loadErrs []string
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			loadErrs = append(loadErrs, e.Error())
		}
	})
	if len(loadErrs) > 0 {
		return nil, fmt.Errorf("load %v in %s: %s", patterns, dir, strings.Join(loadErrs, "; "))
	}

	type decl struct {
		name   string
		method bool
		short  string // the bare function or method name
	}
	decls := map[token.Position]decl{} // by the position of the name
	used := map[token.Position]bool{}
	// error is in no package; errors.Is, As and Unwrap call these by an
	// interface written in place inside package errors.
	ifaceMethods := map[string]bool{"Error": true, "Is": true, "As": true, "Unwrap": true}

	seenTypes := map[*types.Package]bool{}
	var collectIfaces func(tp *types.Package)
	collectIfaces = func(tp *types.Package) {
		if tp == nil || seenTypes[tp] {
			return
		}
		seenTypes[tp] = true
		scope := tp.Scope()
		for _, n := range scope.Names() {
			if tn, ok := scope.Lookup(n).(*types.TypeName); ok {
				if it, ok := tn.Type().Underlying().(*types.Interface); ok {
					for i := range it.NumMethods() {
						ifaceMethods[it.Method(i).Name()] = true
					}
				}
			}
		}
		for _, imp := range tp.Imports() {
			collectIfaces(imp)
		}
	}

	for _, p := range pkgs {
		collectIfaces(p.Types)
		// Interfaces written in place (a parameter of type
		// interface{ Close() error }) are in no scope.
		for _, tv := range p.TypesInfo.Types {
			if it, ok := tv.Type.Underlying().(*types.Interface); ok {
				for i := range it.NumMethods() {
					ifaceMethods[it.Method(i).Name()] = true
				}
			}
		}
		for id, obj := range p.TypesInfo.Uses {
			fn, ok := obj.(*types.Func)
			if !ok {
				continue
			}
			if strings.HasSuffix(fset.Position(id.Pos()).Filename, "_test.go") && !testSupport(fn) {
				continue // a use by a test keeps nothing in the binaries
			}
			used[fset.Position(fn.Origin().Pos())] = true
		}
		for _, f := range p.Syntax {
			if strings.HasSuffix(fset.Position(f.Pos()).Filename, "_test.go") {
				continue
			}
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || !fd.Name.IsExported() {
					continue
				}
				name := p.PkgPath + "." + fd.Name.Name
				method := fd.Recv != nil
				if method {
					name = p.PkgPath + "." + recvName(fd.Recv.List[0].Type) + "." + fd.Name.Name
				}
				decls[fset.Position(fd.Name.Pos())] = decl{name: name, method: method, short: fd.Name.Name}
			}
		}
	}

	var out []Finding
	for pos, d := range decls {
		if used[pos] || (d.method && ifaceMethods[d.short]) {
			continue
		}
		out = append(out, Finding{Name: d.name, Pos: fmt.Sprintf("%s:%d", pos.Filename, pos.Line)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// testSupport says whether fn exists for tests, so that a use by a test
// counts: it is declared in a package made for tests (a path element
// testkit, fake, or one ending in "test", as httptest), or it is a test
// hook of a package the binaries use, named TestOnly (another package's
// tests call it, so it cannot live in a _test.go file).
func testSupport(fn *types.Func) bool {
	if strings.HasPrefix(fn.Name(), "TestOnly") {
		return true
	}
	if fn.Pkg() == nil {
		return false
	}
	for _, e := range strings.Split(fn.Pkg().Path(), "/") {
		if e == "testkit" || e == "fake" || strings.HasSuffix(e, "test") {
			return true
		}
	}
	return false
}

// recvName is the receiver's type name without pointer or type parameters.
func recvName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return "?"
		}
	}
}
