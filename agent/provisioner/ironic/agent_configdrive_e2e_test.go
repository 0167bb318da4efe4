package ironic_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
	"github.com/rackfence/rackfence/testkit/rig"
)

// The whole path with real processes: records created through the API,
// a host naming them, the agent (--provisioner ironic) revealing them and
// deploying through the real Ironic over Redfish virtual media to
// rackfence-bmcsim's iLO profile. Ironic's redfish-virtual-media boot
// attaches the config drive it builds as a virtual USB stick, which the
// iLO shape offers beside its CD (a BMC with only a CD fails the deploy
// with Ironic's "no suitable virtual USB slot", which the host reports).
// Timed:
//
//	go test -count=1 -v -run TestAgentIronicConfigDrive ./agent/provisioner/ironic/
func TestAgentIronicConfigDrive(t *testing.T) {
	url := needIronic(t)
	requireSushy(t)
	dir := t.TempDir()
	sim, err := bmcsim.Start(bmcsim.Config{Hosts: 1, Profile: "ilo", AuditPath: filepath.Join(dir, "audit.jsonl"),
		MACPrefix: fmt.Sprintf("52:57:%02x:%02x", hostSeq.Add(1)&0xff, time.Now().Unix()&0xff)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	c := rig.StartCoordinator(t, dir, rig.CoordOpts{})
	ctx := rig.Ctx(t)
	if err := c.Admin.SetCredentials(ctx, "cd-data", wire.Credentials{Data: map[string]string{
		"userData":    "#cloud-config\nhostname: e2e\n",
		"networkData": `{"links":[],"networks":[],"services":[]}`,
	}}); err != nil {
		t.Fatal(err)
	}
	c.StartAgent("r1", "a1", "--provisioner", "ironic", "--ironic-url", url)

	name := uniqName("agent-cd")
	host := &wire.Host{Name: name, Rack: "r1", Online: true, BootMACAddress: sim.MAC(0),
		BMC:         wire.BMC{Address: sim.Address(0), Credentials: "bmc"},
		UserData:    &wire.SecretReference{Name: "cd-data"},
		NetworkData: &wire.SecretReference{Name: "cd-data"}}
	c.Apply(host)
	h := c.WaitHost(name, 3*time.Minute, "available through Ironic", rig.StateIs(wire.StateAvailable, wire.OpOK))
	t.Cleanup(func() {
		if id := h.Status.ProvisioningID; id != "" {
			forceDelete(t, url, id)
		}
	})
	start := time.Now()
	host.Image = &wire.Image{URL: "http://127.0.0.1:9/images/" + name + ".iso"}
	c.Apply(host)
	h = c.WaitHost(name, 3*time.Minute, "the deploy's outcome", func(h *wire.Host) error {
		if h.Status == nil || (h.Status.ProvisioningState != wire.StateProvisioned && h.Status.ErrorMessage == "") {
			return fmt.Errorf("status %+v", h.Status)
		}
		return nil
	})
	t.Logf("deploy with a config drive through the agent and Ironic: %.1f s, state %s, error %q",
		time.Since(start).Seconds(), h.Status.ProvisioningState, h.Status.ErrorMessage)
	n, _ := rawNode(t, url, h.Status.ProvisioningID)
	if n == nil || n.InstanceInfo["configdrive"] != "******" {
		t.Fatalf("the deploy request carried no config drive: node %+v", n)
	}
	// What the agent revealed reached Ironic unchanged.
	drive, _ := storedInstanceInfo(t, sharedIronic.Dir, h.Status.ProvisioningID)["configdrive"].(map[string]any)
	md, _ := drive["meta_data"].(map[string]any)
	if drive["user_data"] != "#cloud-config\nhostname: e2e\n" || md["uuid"] != h.Status.ProvisioningID || md["name"] != name {
		t.Fatalf("config drive stored by Ironic: %v", drive)
	}
	if nd, _ := drive["network_data"].(map[string]any); nd == nil || nd["links"] == nil {
		t.Fatalf("network_data stored by Ironic: %v", drive["network_data"])
	}
	if h.Status.ProvisioningState != wire.StateProvisioned {
		t.Fatalf("deploy with a config drive failed: %s", h.Status.ErrorMessage)
	}
	// Ironic inserted two media: the boot ISO in the CD and its config
	// drive in the USB stick.
	var cd, usb string
	for _, m := range sim.State(0).VirtualMedia {
		switch {
		case !m.Inserted:
		case strings.HasSuffix(m.Path, "/1"):
			usb = m.Image
		default:
			cd = m.Image
		}
	}
	if cd == "" || usb == "" || cd == usb {
		t.Fatalf("virtual media after the deploy: CD %q, USB %q; want both, different", cd, usb)
	}
}
