package agent_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/api"
	"github.com/rackfence/rackfence/shared/testenv/rig"
)

// TestIronicProvisioner runs the agent with --provisioner ironic against a
// real Ironic (deploy/peers/ironic.sh) whose redfish driver talks to
// bmcsim: hosts register and become available through Ironic, and a
// detach is acknowledged with the Ironic node gone.
func TestIronicProvisioner(t *testing.T) {
	ir, e := rig.StartIronic(t), newEnv(t, envOpts{bmcs: 2})
	e.apply(e.hostSpec("i0", "r1", 0))
	e.apply(e.hostSpec("i1", "r1", 1))
	e.startAgent("r1", "a1", "--provisioner", "ironic", "--ironic-url", ir.URL, "--lease-ttl", "10s")
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
	if code := ir.NodeStatus(t, node); code != http.StatusNotFound {
		t.Fatalf("GET Ironic node %s after detach answered %d, want 404 (node deleted)", node, code)
	}
}
