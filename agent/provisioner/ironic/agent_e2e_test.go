package ironic_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// The agent with --provisioner ironic against a BMC with no session
// service (bmcsim profile basic-only): Ironic registers it (sushy falls
// back to HTTP Basic), inspects it through its redfish inspect interface
// (the agent does not read the BMC inventory through bmclib, which
// cannot log in there), provisions it over virtual media and deprovisions
// it. Asserted on the host's status and the simulator's state.
//
//	go test -race -count=1 -v -run 'TestAgentIronicBasicOnlyBMC' ./agent/provisioner/ironic/
func TestAgentIronicBasicOnlyBMC(t *testing.T) {
	url := needIronic(t)
	requireSushy(t)
	dir := t.TempDir()
	sim, err := bmcsim.Start(bmcsim.Config{Hosts: 1, Profile: "basic-only", AuditPath: filepath.Join(dir, "audit.jsonl"),
		MACPrefix: fmt.Sprintf("52:56:%02x:%02x", hostSeq.Add(1)&0xff, time.Now().Unix()&0xff)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	c := rig.StartCoordinator(t, dir, rig.CoordOpts{})
	c.StartAgent("r1", "a1", "--provisioner", "ironic", "--ironic-url", url)

	name := uniqName("agent-basic")
	iso := "http://127.0.0.1:9/images/" + name + ".iso"
	host := &wire.Host{Name: name, Rack: "r1", Online: true, BootMACAddress: sim.MAC(0),
		BMC: wire.BMC{Address: sim.Address(0), Credentials: "bmc"}}
	start := time.Now()
	c.Apply(host)
	h := c.WaitHost(name, 3*time.Minute, "available through Ironic", rig.StateIs(wire.StateAvailable, wire.OpOK))
	t.Logf("registered and inspected through Ironic in %.1f s", time.Since(start).Seconds())
	t.Cleanup(func() {
		if id := h.Status.ProvisioningID; id != "" {
			forceDelete(t, url, id)
		}
	})
	want := sim.ExpectedHardware(0, 0)
	hw := h.Status.HardwareDetails
	if hw == nil || hw.MemoryMiB != want.MemoryMiB || len(hw.CPUs) != 1 || hw.CPUs[0].Threads != 4 {
		t.Fatalf("hardware details %+v, want Ironic's redfish inspection of the fixture (8192 MiB, 4 threads)", hw)
	}
	// Registration through Ironic records what the BMC is, read by the
	// agent (read-only) as the direct provisioner does: Basic auth here.
	if bd, wantBD := h.Status.BMCDetails, sim.ExpectedBMC(0, 0); bd == nil || bd.Auth != "basic" || bd.System != wantBD.System ||
		bd.VirtualMedia != wantBD.VirtualMedia || bd.VirtualMediaMethod != wantBD.VirtualMediaMethod {
		t.Fatalf("status.bmcDetails %+v, want %+v", bd, wantBD)
	}
	// The host is available once inspected; the agent's provide follows.
	var n *nodes.Node
	testenv.Eventually(t, 2*time.Minute, "Ironic node available (provided)", func() error {
		var err error
		if n, err = rawNode(t, url, h.Status.ProvisioningID); err != nil || n == nil {
			return fmt.Errorf("node %s: %v", h.Status.ProvisioningID, err)
		}
		if n.ProvisionState != "available" {
			return fmt.Errorf("node is %q (last_error %q)", n.ProvisionState, n.LastError)
		}
		return nil
	})
	if n.Driver != "redfish" || n.InspectInterface != "redfish" {
		t.Fatalf("node driver %q inspect %q, want redfish, redfish", n.Driver, n.InspectInterface)
	}
	if st := sim.State(0); st.Logins != 0 {
		t.Fatalf("%d session logins on a BMC without a session service", st.Logins)
	}

	start = time.Now()
	host.Image = &wire.Image{URL: iso}
	c.Apply(host)
	c.WaitHost(name, 3*time.Minute, "provisioned through Ironic", rig.StateIs(wire.StateProvisioned, wire.OpOK))
	t.Logf("provisioned over virtual media in %.1f s", time.Since(start).Seconds())
	st := sim.State(0)
	if len(st.VirtualMedia) == 0 || !strings.HasSuffix(st.VirtualMedia[0].Path, "/Managers/1/VirtualMedia/Cd") ||
		st.VirtualMedia[0].Image != iso || !st.VirtualMedia[0].Inserted || st.Power != "On" || st.LastBoot != "Cd" {
		t.Fatalf("simulator after provisioning: media %+v, power %s, last boot %q", st.VirtualMedia, st.Power, st.LastBoot)
	}

	start = time.Now()
	host.Image = nil
	c.Apply(host)
	c.WaitHost(name, 3*time.Minute, "deprovisioned through Ironic", rig.StateIs(wire.StateAvailable, wire.OpOK))
	t.Logf("deprovisioned in %.1f s", time.Since(start).Seconds())
	for _, m := range sim.State(0).VirtualMedia {
		if m.Inserted {
			t.Fatalf("virtual media %s still inserted after deprovisioning: %+v", m.Path, m)
		}
	}
	wantState(t, url, h.Status.ProvisioningID, "available")
}
