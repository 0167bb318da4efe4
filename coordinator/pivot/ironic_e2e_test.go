package pivot_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/api"
	"github.com/rackfence/rackfence/shared/testenv"
	"github.com/rackfence/rackfence/shared/testenv/rig"
)

// startIronic starts a standalone Ironic (deploy/peers/ironic.sh) in dir and
// returns its URL; it stops with the test (and if the test process dies).
func startIronic(t *testing.T, dir string) string {
	t.Helper()
	script := filepath.Join(testenv.RepoRoot(t), "deploy", "peers", "ironic.sh")
	port := testenv.FreePort(t, "127.0.0.1")
	cmd := exec.Command(script, "start", dir, fmt.Sprint(port))
	cmd.Env = append(os.Environ(), fmt.Sprintf("IRONIC_WATCH_PID=%d", os.Getpid()))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ironic.sh start: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(script, "stop", dir).Run() })
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}

type ironicNode struct {
	UUID           string `json:"uuid"`
	Name           string `json:"name"`
	ProvisionState string `json:"provision_state"`
	Maintenance    bool   `json:"maintenance"`
}

// ironicNodes lists an Ironic's nodes.
func ironicNodes(t *testing.T, url string) []ironicNode {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url+"/v1/nodes?fields=uuid,name,provision_state,maintenance", nil)
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.81")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Nodes []ironicNode }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Nodes
}

// TestPivotIronic: each tier drives its own real Ironic. The pivoted nodes
// leave the source's Ironic without deprovisioning (no BMC command at all)
// and are adopted into the destination's.
func TestPivotIronic(t *testing.T) {
	_, err := os.Stat("/usr/bin/ironic")
	testenv.RequirePeer(t, err == nil, "/usr/bin/ironic (python3-ironic)")
	dir := t.TempDir()
	urlA, urlB := startIronic(t, filepath.Join(dir, "ironic-a")), startIronic(t, filepath.Join(dir, "ironic-b"))
	x := startTiersWith(t, 2, []string{"--provisioner", "ironic", "--ironic-url", urlA, "--lease-ttl", "10s"},
		[]string{"--provisioner", "ironic", "--ironic-url", urlB, "--lease-ttl", "10s"})
	a, b, sim := x.a, x.b, x.sim

	ext := sim.Host("i0", "r1", 0)
	ext.ExternallyProvisioned = true
	a.Apply(ext)
	a.Apply(sim.Host("i1", "r1", 1))
	a.WaitHost("i0", 4*time.Minute, "adopted through site-a's Ironic", rig.StateIs(api.StateExternallyProvisioned, api.OpOK))
	a.WaitHost("i1", 4*time.Minute, "available through site-a's Ironic", rig.StateIs(api.StateAvailable, api.OpOK))
	if n := ironicNodes(t, urlA); len(n) != 2 {
		t.Fatalf("site-a's Ironic has %d nodes before the pivot, want 2: %+v", len(n), n)
	}
	// Let Ironic's own power sync settle before counting BMC commands.
	testenv.Eventually(t, time.Minute, "powered on", func() error {
		for _, n := range []string{"i0", "i1"} {
			if h := a.Host(n); !h.Status.PoweredOn {
				return fmt.Errorf("%s off", n)
			}
		}
		return nil
	})
	before := len(sim.AuditLines(-1))

	out, code := x.ctl(a, x.adminTokA, "pivot", "--rack", "r1", "--to", "site-b", "--wait")
	if code != 0 {
		t.Fatalf("pivot exited %d:\n%s", code, out)
	}
	if n := ironicNodes(t, urlA); len(n) != 0 {
		t.Errorf("site-a's Ironic still has nodes after the pivot: %+v", n)
	}
	b.WaitHost("i0", 4*time.Minute, "adopted in site-b", rig.StateIs(api.StateExternallyProvisioned, api.OpOK))
	b.WaitHost("i1", 4*time.Minute, "available in site-b", rig.StateIs(api.StateAvailable, api.OpOK))
	testenv.Eventually(t, 2*time.Minute, "site-b's Ironic nodes settled", func() error {
		states := map[string]string{}
		for _, n := range ironicNodes(t, urlB) {
			states[n.Name] = n.ProvisionState
		}
		if states["i0"] != "active" || states["i1"] != "available" {
			return fmt.Errorf("site-b's Ironic nodes: %v, want i0 active (adopted), i1 available", states)
		}
		return nil
	})
	for _, l := range sim.AuditLines(-1)[before:] {
		t.Errorf("mutating BMC call during the pivot: %s %s %s ua=%q", l.Method, l.Path, l.Body, l.UserAgent)
	}
}
