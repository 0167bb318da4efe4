package agent_test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/api"
	"github.com/rackfence/rackfence/shared/testenv"
)

// TestIronicProvisioner runs the agent with --provisioner ironic against a
// real Ironic (deploy/peers/ironic.sh) whose redfish driver talks to
// bmcsim: hosts register and become available through Ironic, and a
// detach is acknowledged with the Ironic node gone.
func TestIronicProvisioner(t *testing.T) {
	_, err := os.Stat("/usr/bin/ironic")
	testenv.RequirePeer(t, err == nil, "/usr/bin/ironic (python3-ironic)")
	e := newEnv(t, envOpts{bmcs: 2})

	script := filepath.Join(testenv.RepoRoot(t), "deploy", "peers", "ironic.sh")
	dir := filepath.Join(e.dir, "ironic")
	port := testenv.FreePort(t, "127.0.0.1")
	cmd := exec.Command(script, "start", dir, fmt.Sprint(port))
	cmd.Env = append(os.Environ(), fmt.Sprintf("IRONIC_WATCH_PID=%d", os.Getpid()))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ironic.sh start: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(script, "stop", dir).Run() })
	ironicURL := fmt.Sprintf("http://127.0.0.1:%d", port)

	e.apply(e.hostSpec("i0", "r1", 0))
	e.apply(e.hostSpec("i1", "r1", 1))
	e.startAgent("r1", "a1", "--provisioner", "ironic", "--ironic-url", ironicURL, "--lease-ttl", "10s")
	for _, n := range []string{"i0", "i1"} {
		h := e.waitHost(n, 3*time.Minute, "available through Ironic", stateIs(api.StateAvailable, api.OpOK))
		if h.Status.ProvisioningID == "" {
			t.Errorf("%s has no Ironic node UUID as provisioningID", n)
		}
	}
	h := e.host("i1")
	node := h.Status.ProvisioningID
	if _, err := e.admin.Detach(ctx(t), "i1", api.IntentRequest{Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	e.waitHost("i1", 2*time.Minute, "detach acknowledged", func(h *api.Host) error {
		if h.Intents == nil || h.Intents.Detach == nil || !h.Intents.Detach.Acknowledged {
			return fmt.Errorf("intents %+v", h.Intents)
		}
		return nil
	})
	req, _ := http.NewRequest(http.MethodGet, ironicURL+"/v1/nodes/"+node, nil)
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.81")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET Ironic node %s after detach answered %d, want 404 (node deleted)", node, resp.StatusCode)
	}
}
