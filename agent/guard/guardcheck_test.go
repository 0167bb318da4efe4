package guard

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/testkit/testenv"
)

// mutating is THE table of calls that change a BMC or a provisioner's
// record. Every call to one of them anywhere in agent/** (outside _test.go)
// must sit lexically inside a function literal passed to Guard.Do.
//
// Key: import path of the package. Value: names that mutate. For bmclib
// and gofish the names are methods (of *bmclib.Client; of gofish's
// entities — ComputerSystem, Manager, VirtualMedia, common.Entity — and of
// its *APIClient), checked in every file importing the package, whatever
// the receiver is called; for the others they are package-level functions
// (pkg.Name(...), resolved through the file's import name).
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
	// gofish (agent/bmc's Redfish layer): the entities' mutations. Each
	// sends If-Match with the entity's ETag; every one changes the host or
	// its BMC.
	"github.com/stmcginnis/gofish/redfish": {methods: true, names: []string{
		"Reset", "SetBoot", "InsertMedia", "InsertMediaConfig", "EjectMedia", "Update", "Patch", "Post",
		"PostWithResponse", "UpdateBootAttributes", "UpdateBootAttributesApplyAt", "SetDefaultBootOrder",
		"ResetToDefaults", "ForceFailover", "ModifyRedundancySet", "ClearLog",
	}},
	"github.com/stmcginnis/gofish/common": {methods: true, names: []string{
		"Update", "Patch", "Post", "PostWithResponse",
	}},
	// The raw client: any write through it (session login and logout go
	// through gofish's own CreateSession/Logout, which are not writes to
	// the host).
	"github.com/stmcginnis/gofish": {methods: true, names: []string{
		"Post", "PostWithHeaders", "PostMultipart", "PostMultipartWithHeaders", "Patch", "PatchWithHeaders",
		"Put", "PutWithHeaders", "Delete", "DeleteWithHeaders", "RunRawRequestWithHeaders",
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
func checkGuarded(fset *token.FileSet, name string, src any) ([]violation, map[string]int, error) {
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, nil, err
	}
	pkgFuncs := map[string]map[string]string{} // local import name -> mutating func -> import path
	methods := map[string][]string{}           // mutating method -> import paths naming it
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		m, ok := mutating[path]
		if !ok {
			continue
		}
		set := map[string]string{}
		for _, n := range m.names {
			set[n] = path
		}
		if m.methods {
			for n := range set {
				methods[n] = append(methods[n], path)
			}
			continue
		}
		local := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			local = imp.Name.Name
		}
		pkgFuncs[local] = set
	}
	if redfishLayer(name) {
		// agent/bmc reaches the BMC through its session's gofish client
		// (rfSession.api) in files that need not import gofish: its raw
		// writes are checked there whatever the file imports.
		const raw = "github.com/stmcginnis/gofish"
		for _, n := range mutating[raw].names {
			if !slices.Contains(methods[n], raw) {
				methods[n] = append(methods[n], raw)
			}
		}
	}
	if len(pkgFuncs) == 0 && len(methods) == 0 {
		return nil, nil, nil
	}
	var out []violation
	guardedCalls := map[string]int{} // import path -> guarded mutating calls
	var walk func(n ast.Node, guarded bool)
	walk = func(n ast.Node, guarded bool) {
		ast.Inspect(n, func(x ast.Node) bool {
			call, ok := x.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
				if paths := mutatingPaths(sel, pkgFuncs, methods); len(paths) > 0 {
					if guarded {
						for _, p := range paths {
							guardedCalls[p]++
						}
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

// redfishLayer: the file is agent/bmc's (its Redfish layer on gofish).
func redfishLayer(name string) bool {
	return strings.Contains(filepath.ToSlash(name), "agent/bmc/")
}

// mutatingPaths returns the import paths whose table names the call (none:
// not a mutation).
func mutatingPaths(sel *ast.SelectorExpr, pkgFuncs map[string]map[string]string, methods map[string][]string) []string {
	if id, ok := sel.X.(*ast.Ident); ok {
		if set, ok := pkgFuncs[id.Name]; ok {
			if p, ok := set[sel.Sel.Name]; ok {
				return []string{p}
			}
			return nil
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
	guardedIn := map[string]map[string]int{} // package directory -> import path -> guarded mutating calls
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
			dir := filepath.ToSlash(rel)
			if guardedIn[dir] == nil {
				guardedIn[dir] = map[string]int{}
			}
			for p, k := range n {
				guardedIn[dir][p] += k
			}
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
	// (bmclib for IPMI, gofish for Redfish) and the Ironic provisioner each
	// have guarded mutations. None found means an import path or a name in
	// the table went stale.
	for _, want := range []struct{ dir, path string }{
		{"bmc", "github.com/bmc-toolbox/bmclib/v2"},
		{"bmc", "github.com/stmcginnis/gofish/redfish"},
		{"provisioner/ironic", "github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"},
	} {
		if guardedIn[want.dir][want.path] == 0 {
			t.Errorf("found no guarded mutating call of %s in agent/%s: the table above no longer matches its imports", want.path, want.dir)
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
	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/redfish"
)

func bad(ctx context.Context, cl *bmclib.Client, g *Guard, sys *redfish.ComputerSystem, vm *redfish.VirtualMedia, api *gofish.APIClient) {
	cl.SetPowerState(ctx, "on")                       // 1: bare
	bm.ChangePowerState(ctx, nil, "u", bm.PowerStateOpts{}) // 2: bare, aliased import
	go func() { ports.Delete(ctx, nil, "p") }()       // 3: inside a func lit, but not Do's
	g.Do(ctx, "h", "op", 0, named)                    // named func: not lexically guarded
	_ = bm.Get(ctx, nil, "u")                         // read: fine
	_ = bm.UpdateOpts{}                               // not a call
	_ = sys.Reset(redfish.OnResetType)                // 5: gofish power, bare
	_ = vm.InsertMediaConfig(redfish.VirtualMediaConfig{}) // 6
	_ = vm.Patch("/x", nil)                           // 7: PATCH through the entity
	_, _ = api.Post("/x", nil)                        // 8: raw write
	_, _ = api.Get("/x")                              // read: fine
	_, _ = redfish.GetComputerSystem(api, "/x")       // read: fine
}

func named(ctx context.Context) error { return bm.Delete(ctx, nil, "u").ExtractErr() } // 4

func good(ctx context.Context, cl *bmclib.Client, g *Guard, sys *redfish.ComputerSystem, vm *redfish.VirtualMedia) {
	_ = g.Do(ctx, "h", "power on", 0, func(ctx context.Context) error {
		_, err := cl.SetPowerState(ctx, "on")
		return err
	})
	_ = g.Do(ctx, "h", "op", 0, func(ctx context.Context) error {
		return wrap(func() error { return bm.Update(ctx, nil, "u", nil).Err }) // nested: fine
	})
	_ = g.Do(ctx, "h", "boot", 0, func(ctx context.Context) error {
		return call(ctx, func(ctx context.Context) error { // nested, as agent/bmc's rfCall
			if err := sys.SetBoot(redfish.Boot{}); err != nil {
				return err
			}
			return vm.EjectMedia()
		})
	})
}
`
	vs, guarded, err := checkGuarded(token.NewFileSet(), "x.go", src)
	if err != nil {
		t.Fatal(err)
	}
	wantGuarded := map[string]int{
		"github.com/bmc-toolbox/bmclib/v2":                                   1,
		"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes": 1,
		"github.com/stmcginnis/gofish/redfish":                               2,
	}
	if fmt.Sprint(guarded) != fmt.Sprint(wantGuarded) {
		t.Errorf("guarded calls = %v; want %v", guarded, wantGuarded)
	}
	var got []string
	for _, v := range vs {
		got = append(got, v.call)
	}
	want := []string{"cl.SetPowerState", "bm.ChangePowerState", "ports.Delete", "sys.Reset", "vm.InsertMediaConfig", "vm.Patch", "api.Post", "bm.Delete"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("violations = %v; want %v", got, want)
	}
}

// TestGuardCheckCatchesPlantedBypass plants an unguarded gofish mutation in
// a copy of agent/bmc's real Redfish power file (a helper calling
// ComputerSystem.Reset outside any Guard.Do closure) and checks the walk
// reports exactly it, while the unchanged file has none.
func TestGuardCheckCatchesPlantedBypass(t *testing.T) {
	path := filepath.Join(testenv.RepoRoot(t), "agent", "bmc", "redfish_power.go")
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	vs, guarded, err := checkGuarded(token.NewFileSet(), path, orig)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 0 || guarded["github.com/stmcginnis/gofish/redfish"] < 3 {
		t.Fatalf("real file: violations %v, guarded %v; want none and at least Reset, SetBoot, Manager.Reset guarded", vs, guarded)
	}
	planted := string(orig) + `
// powerOnQuickly skips the guard: the bypass the check must catch.
func powerOnQuickly(sys *redfish.ComputerSystem) error {
	return sys.Reset(redfish.OnResetType)
}
`
	vs, _, err = checkGuarded(token.NewFileSet(), path, planted)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || vs[0].call != "sys.Reset" {
		t.Fatalf("planted bypass: violations %v; want exactly sys.Reset", vs)
	}
	t.Logf("planted bypass caught: %s: %s", vs[0].pos, vs[0].call)
}

// A raw write through the session's gofish client in an agent/bmc file
// that imports no gofish package (the day-two files reach the client as
// s.api) is still checked: the real day-two files have their writes
// guarded, and one planted outside Guard.Do is caught.
func TestGuardCheckCoversFilesWithoutGofishImport(t *testing.T) {
	dir := filepath.Join(testenv.RepoRoot(t), "agent", "bmc")
	guardedWrites := 0
	for _, f := range []string{"redfish_bios.go", "redfish_update.go", "redfish_storage.go"} {
		vs, guarded, err := checkGuarded(token.NewFileSet(), filepath.Join(dir, f), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 0 {
			t.Errorf("%s: unguarded writes %v", f, vs)
		}
		guardedWrites += guarded["github.com/stmcginnis/gofish"]
	}
	if guardedWrites < 5 {
		t.Errorf("found %d guarded gofish writes in the day-two files; want at least PATCH, 2 POST of an update, volume POST and DELETE, erase POST", guardedWrites)
	}
	planted := `package bmc

// eraseQuickly skips the guard: the bypass the check must catch.
func (c *Conn) eraseQuickly(s *rfSession, target string) error {
	_, err := s.api.Post(target, map[string]any{})
	return err
}
`
	vs, _, err := checkGuarded(token.NewFileSet(), filepath.Join(dir, "redfish_planted.go"), planted)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || vs[0].call != "….Post" {
		t.Fatalf("planted bypass in a file importing no gofish package: violations %v; want the Post", vs)
	}
}
