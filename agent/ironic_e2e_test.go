package agent_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestIronicProvisioner runs the agent with --provisioner ironic against a
// real Ironic (deploy/peers/ironic.sh) whose redfish driver talks to
// bmcsim: hosts register and become available through Ironic, and a
// detach is acknowledged with the Ironic node gone. With
// --bmc-account-rotation each host's BMC account record says the fence at
// the BMC is off on this path, and why.
func TestIronicProvisioner(t *testing.T) {
	ir, e := rig.StartIronic(t), newEnv(t, envOpts{bmcs: 2})
	e.apply(e.hostSpec("i0", "r1", 0))
	e.apply(e.hostSpec("i1", "r1", 1))
	e.startAgent("r1", "a1", "--provisioner", "ironic", "--ironic-url", ir.URL, "--lease-ttl", "10s", "--bmc-account-rotation")
	for _, n := range []string{"i0", "i1"} {
		h := e.waitHost(n, 3*time.Minute, "available through Ironic", stateIs(wire.StateAvailable, wire.OpOK))
		if h.Status.ProvisioningID == "" {
			t.Errorf("%s has no Ironic node UUID as provisioningID", n)
		}
		rec, err := e.admin.GetBMCAccount(ctx(t), n, false, 0)
		if err != nil || rec.State != wire.BMCAccountOff || !strings.Contains(rec.Reason, "--provisioner ironic") || !strings.Contains(rec.Reason, "driver_info") {
			t.Errorf("%s's BMC account record on the Ironic path: %v %v, want off naming Ironic's driver_info", n, rec, err)
		}
	}
	h := e.host("i1")
	node := h.Status.ProvisioningID
	if _, err := e.admin.Detach(ctx(t), "i1", wire.IntentRequest{Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	e.waitHost("i1", 2*time.Minute, "detach acknowledged", func(h *wire.Host) error {
		if h.Intents == nil || h.Intents.Detach == nil || !h.Intents.Detach.Acknowledged {
			return fmt.Errorf("intents %+v", h.Intents)
		}
		return nil
	})
	if code := ir.NodeStatus(t, node); code != http.StatusNotFound {
		t.Fatalf("GET Ironic node %s after detach answered %d, want 404 (node deleted)", node, code)
	}
}

// TestIronicRebootAndInspect: with --provisioner ironic a soft reboot is
// Ironic's soft power off (GracefulShutdown on the BMC) then power on, and
// an inspect intent takes the available node through manage, inspect and
// provide back to available.
func TestIronicRebootAndInspect(t *testing.T) {
	ir, e := rig.StartIronic(t), newEnv(t, envOpts{bmcs: 1, simArgs: []string{"--graceful-shutdown-delay", "300ms"}})
	e.apply(e.hostSpec("ir", "r1", 0))
	e.startAgent("r1", "a1", "--provisioner", "ironic", "--ironic-url", ir.URL, "--lease-ttl", "10s", "--poll-interval", "500ms")
	first := e.waitHost("ir", 3*time.Minute, "available and on through Ironic", func(h *wire.Host) error {
		if err := stateIs(wire.StateAvailable, wire.OpOK)(h); err != nil {
			return err
		}
		if !h.Status.PoweredOn {
			return fmt.Errorf("not powered on yet")
		}
		return nil
	})
	n := len(e.auditLines(0))
	start := time.Now()
	if _, err := e.admin.Reboot(ctx(t), "ir", wire.RebootRequest{Mode: wire.RebootSoft}); err != nil {
		t.Fatal(err)
	}
	e.waitHost("ir", 2*time.Minute, "soft reboot through Ironic done", func(h *wire.Host) error {
		if err := rebootGone(h); err != nil {
			return err
		}
		if !h.Status.PoweredOn {
			return fmt.Errorf("not on again")
		}
		return nil
	})
	t.Logf("soft reboot through Ironic: %s", time.Since(start).Round(time.Millisecond))
	got := resetsSince(e.auditLines(0), n)
	if len(got) < 2 || got[0] != "GracefulShutdown" || got[len(got)-1] != "On" {
		t.Fatalf("BMC resets during the soft reboot through Ironic: %v, want GracefulShutdown first and On last", got)
	}

	start = time.Now()
	if _, err := e.admin.Inspect(ctx(t), "ir", wire.IntentRequest{}); err != nil {
		t.Fatal(err)
	}
	h := e.waitHost("ir", 3*time.Minute, "inspected again through Ironic", func(h *wire.Host) error {
		if h.Intents != nil {
			return fmt.Errorf("intents %+v", h.Intents)
		}
		if err := stateIs(wire.StateAvailable, wire.OpOK)(h); err != nil {
			return err
		}
		if oh := h.Status.OperationHistory; oh == nil || !oh.Inspect.Start.After(first.Status.OperationHistory.Inspect.Start) || oh.Inspect.End.IsZero() {
			return fmt.Errorf("operation history %+v", h.Status.OperationHistory)
		}
		return nil
	})
	t.Logf("inspect through Ironic (manage, inspect, provide): %s", time.Since(start).Round(time.Millisecond))
	if h.Status.HardwareDetails == nil {
		t.Fatal("no hardware details after the re-inspection")
	}
	// Ironic did manage, inspect and provide the node (the guard's audit
	// of the agent's Ironic calls says so, in that order).
	testenv.Eventually(t, 2*time.Minute, "manage, inspect, provide in the guard audit", func() error {
		b, err := os.ReadFile(filepath.Join(e.c.Dir, "guard-a1.jsonl"))
		if err != nil {
			return err
		}
		s := string(b)
		i := strings.LastIndex(s, "ironic.provision-manage")
		j := strings.LastIndex(s, "ironic.provision-inspect")
		k := strings.LastIndex(s, "ironic.provision-provide")
		if i < 0 || j < i || k < j {
			return fmt.Errorf("no manage → inspect → provide in the audit (%d %d %d)", i, j, k)
		}
		return nil
	})
}

// TestIronicFirmwareNeedsAgentRamdisk: with --provisioner ironic a host
// with firmware[] is prepared through Ironic's clean steps, which Ironic
// 21.4 runs only with its agent ramdisk; an agent started without one
// (no --ironic-deploy-kernel) leaves the host in a preparation error that
// says so, the node untouched in available.
func TestIronicFirmwareNeedsAgentRamdisk(t *testing.T) {
	ir, e := rig.StartIronic(t), newEnv(t, envOpts{bmcs: 1})
	h := e.hostSpec("fw", "r1", 0)
	h.Firmware = []wire.FirmwareComponent{{Component: "bmc", URL: "http://192.0.2.1/fw/bmc-2.0.bin",
		Checksum: "sha256:" + strings.Repeat("0", 64), Version: "2.0"}}
	e.apply(h)
	e.startAgent("r1", "a1", "--provisioner", "ironic", "--ironic-url", ir.URL, "--lease-ttl", "10s")
	got := e.waitHost("fw", 3*time.Minute, "in a preparation error naming the agent ramdisk", func(h *wire.Host) error {
		if h.Status == nil || h.Status.ProvisioningState != wire.StatePreparing || h.Status.ErrorType != wire.ErrPreparation ||
			!strings.Contains(h.Status.ErrorMessage, "--ironic-deploy-kernel") {
			return fmt.Errorf("status %+v", h.Status)
		}
		return nil
	})
	t.Logf("status: %s: %s", got.Status.ErrorType, got.Status.ErrorMessage)
	if code := ir.NodeStatus(t, got.Status.ProvisioningID); code != http.StatusOK {
		t.Fatalf("GET Ironic node %s: %d", got.Status.ProvisioningID, code)
	}
}
