package guard

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/testenv"
)

// mutating is THE table of calls that change a BMC or a provisioner's
// record. Every call to one of them anywhere in agent/** (outside _test.go)
// must sit lexically inside a function literal passed to Guard.Do.
//
// Key: import path of the package. Value: names that mutate. For bmclib the
// names are methods of *bmclib.Client (checked in every file importing
// bmclib, whatever the receiver is called); for the others they are
// package-level functions (pkg.Name(...), resolved through the file's
// import name).
var mutating = map[string]struct {
	methods bool
	names   []string
}{
	"github.com/bmc-toolbox/bmclib/v2": {methods: true, names: []string{
		"SetPowerState", "SetBootDevice", "SetVirtualMedia", "ResetBMC",
		"CreateUser", "UpdateUser", "DeleteUser",
		"SetBiosConfiguration", "ResetBiosConfiguration",
		"FirmwareInstall", "FirmwareUpload", "FirmwareInstallUploaded", "FirmwareInstallUploadAndInitiate",
		"MountFloppyImage", "UnmountFloppyImage", "ClearSystemEventLog", "SendNMI", "DeactivateSOL",
	}},
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes": {names: []string{
		"Create", "Update", "Delete", "ChangeProvisionState", "ChangePowerState",
		"SetMaintenance", "UnsetMaintenance", "SetBootDevice", "InjectNMI", "SetRAIDConfig",
		"CallVendorPassthru", "CreateSubscription", "DeleteSubscription",
		"AttachVirtualMedia", "DetachVirtualMedia", "AttachVirtualInterface", "DetachVirtualInterface",
	}},
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/ports": {names: []string{
		"Create", "Update", "Delete",
	}},
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/allocations": {names: []string{
		"Create", "Delete",
	}},
}

// violation is one unguarded mutating call.
type violation struct {
	pos  token.Position
	call string
}

// checkGuarded parses one file (syntax only: it works on packages that do
// not compile or do not exist yet) and returns its unguarded mutating calls
// and the number of guarded ones.
// "Guarded" means lexically inside a function literal that is an argument
// of a call X.Do(ctx, host, op, timeout, func…) with five arguments — the
// shape of Guard.Do, which no other Do in the agent has.
func checkGuarded(fset *token.FileSet, name string, src any) ([]violation, int, error) {
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, 0, err
	}
	pkgFuncs := map[string]map[string]bool{} // local import name -> mutating funcs
	methods := map[string]bool{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		m, ok := mutating[path]
		if !ok {
			continue
		}
		set := map[string]bool{}
		for _, n := range m.names {
			set[n] = true
		}
		if m.methods {
			for n := range set {
				methods[n] = true
			}
			continue
		}
		local := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			local = imp.Name.Name
		}
		pkgFuncs[local] = set
	}
	if len(pkgFuncs) == 0 && len(methods) == 0 {
		return nil, 0, nil
	}
	var out []violation
	guardedCalls := 0
	var walk func(n ast.Node, guarded bool)
	walk = func(n ast.Node, guarded bool) {
		ast.Inspect(n, func(x ast.Node) bool {
			call, ok := x.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
				if isMutating(sel, pkgFuncs, methods) {
					if guarded {
						guardedCalls++
					} else {
						out = append(out, violation{pos: fset.Position(call.Pos()), call: exprString(sel)})
					}
				}
				if sel.Sel.Name == "Do" && len(call.Args) == 5 {
					// Walk the receiver and the arguments ourselves: function
					// literals among the arguments are guarded.
					walk(sel.X, guarded)
					for _, a := range call.Args {
						_, isLit := a.(*ast.FuncLit)
						walk(a, guarded || isLit)
					}
					return false
				}
			}
			return true
		})
	}
	walk(f, false)
	return out, guardedCalls, nil
}

func isMutating(sel *ast.SelectorExpr, pkgFuncs map[string]map[string]bool, methods map[string]bool) bool {
	if id, ok := sel.X.(*ast.Ident); ok {
		if set, ok := pkgFuncs[id.Name]; ok {
			return set[sel.Sel.Name]
		}
	}
	return methods[sel.Sel.Name]
}

func exprString(sel *ast.SelectorExpr) string {
	if id, ok := sel.X.(*ast.Ident); ok {
		return id.Name + "." + sel.Sel.Name
	}
	return "…." + sel.Sel.Name
}

// TestEveryMutationIsGuarded fails when any file under agent/ calls a
// mutating BMC or Ironic function outside Guard.Do.
func TestEveryMutationIsGuarded(t *testing.T) {
	root := filepath.Join(testenv.RepoRoot(t), "agent")
	fset := token.NewFileSet()
	files := 0
	guardedIn := map[string]int{} // package directory -> guarded mutating calls
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || (strings.HasPrefix(n, ".") && path != root) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		files++
		vs, n, err := checkGuarded(fset, path, nil)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return nil
		}
		if rel, err := filepath.Rel(root, filepath.Dir(path)); err == nil {
			guardedIn[filepath.ToSlash(rel)] += n
		}
		for _, v := range vs {
			t.Errorf("%s: %s is a mutating call outside Guard.Do: wrap it in g.Do(ctx, host, op, timeout, func(ctx context.Context) error { … })", v.pos, v.call)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 5 {
		t.Fatalf("checked only %d files under %s; the walk is broken", files, root)
	}
	// The table must still name the calls the agent makes: the BMC adapter
	// and the Ironic provisioner each have guarded mutations. None found
	// means an import path or a name in the table went stale.
	for _, dir := range []string{"bmc", "provisioner/ironic"} {
		if guardedIn[dir] == 0 {
			t.Errorf("found no guarded mutating call in agent/%s: the table above no longer matches its imports", dir)
		}
	}
}

// TestGuardCheckCatchesViolations proves the checker is not vacuous.
func TestGuardCheckCatchesViolations(t *testing.T) {
	src := `package x

import (
	"context"

	bmclib "github.com/bmc-toolbox/bmclib/v2"
	bm "github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/ports"
)

func bad(ctx context.Context, cl *bmclib.Client, g *Guard) {
	cl.SetPowerState(ctx, "on")                       // 1: bare
	bm.ChangePowerState(ctx, nil, "u", bm.PowerStateOpts{}) // 2: bare, aliased import
	go func() { ports.Delete(ctx, nil, "p") }()       // 3: inside a func lit, but not Do's
	g.Do(ctx, "h", "op", 0, named)                    // named func: not lexically guarded
	_ = bm.Get(ctx, nil, "u")                         // read: fine
	_ = bm.UpdateOpts{}                               // not a call
}

func named(ctx context.Context) error { return bm.Delete(ctx, nil, "u").ExtractErr() } // 4

func good(ctx context.Context, cl *bmclib.Client, g *Guard) {
	_ = g.Do(ctx, "h", "power on", 0, func(ctx context.Context) error {
		_, err := cl.SetPowerState(ctx, "on")
		return err
	})
	_ = g.Do(ctx, "h", "op", 0, func(ctx context.Context) error {
		return wrap(func() error { return bm.Update(ctx, nil, "u", nil).Err }) // nested: fine
	})
}
`
	vs, guarded, err := checkGuarded(token.NewFileSet(), "x.go", src)
	if err != nil {
		t.Fatal(err)
	}
	if guarded != 2 {
		t.Errorf("guarded calls = %d; want 2 (cl.SetPowerState and bm.Update in good)", guarded)
	}
	var got []string
	for _, v := range vs {
		got = append(got, v.call)
	}
	want := []string{"cl.SetPowerState", "bm.ChangePowerState", "ports.Delete", "bm.Delete"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("violations = %v; want %v", got, want)
	}
}
