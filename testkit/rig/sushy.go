package rig

import (
	"os"
	"testing"

	"github.com/rackfence/rackfence/testkit/testenv"
)

// SushyStandardRegistries is the directory of DMTF's standard message
// registries that python3-sushy lists whenever it builds its registries
// (Sushy.registries, e.g. for every task monitor Ironic follows). Debian's
// python3-sushy 4.3.3 does not ship it: every such call raises
// FileNotFoundError, and Ironic 21.4 never ends a firmware update step.
// An empty directory is enough (sushy then merges only the registries the
// BMC publishes); deploy/peers/install.sh creates it.
const SushyStandardRegistries = "/usr/lib/python3/dist-packages/sushy/standard_registries"

// RequireSushyRegistries fails the test in CI and skips it loudly
// elsewhere when SushyStandardRegistries is missing (under -short it
// skips first).
func RequireSushyRegistries(t testing.TB) {
	t.Helper()
	fi, err := os.Stat(SushyStandardRegistries)
	testenv.RequirePeer(t, err == nil && fi.IsDir(),
		"sushy's standard_registries/ directory, missing from Debian's python3-sushy 4.3.3 (without it Ironic never ends a firmware step); fix: sudo mkdir -p "+SushyStandardRegistries)
}
