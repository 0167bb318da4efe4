package ctl

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoCoordinatorImports keeps the seam between the CLI and the
// coordinator closed: rackfencectl reaches the coordinator only over HTTP,
// so no package it builds from (tests included) may be one of the
// coordinator's. Code both need (the secrets key file, the backup file
// format) lives under shared/.
func TestNoCoordinatorImports(t *testing.T) {
	const coord = "github.com/rackfence/rackfence/coordinator"
	out, err := exec.Command("go", "list", "-deps", "-test", "github.com/rackfence/rackfence/ctl/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list -deps listed only %d packages; is its output what this test expects?\n%s", len(deps), out)
	}
	for _, p := range deps {
		if p == coord || strings.HasPrefix(p, coord+"/") {
			t.Errorf("ctl depends on %s: move what it needs under shared/ (the CLI talks to the coordinator over HTTP only)", p)
		}
	}
}
