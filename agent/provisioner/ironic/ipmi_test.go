package ironic_test

import (
	"strings"
	"testing"

	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/api"
	"github.com/rackfence/rackfence/shared/testenv/rig"
)

// The ipmi driver (Ironic's ipmitool, cipher suite 3) against an IPMI
// simulator: manage verifies through it, power on/off reaches it, adopt,
// detach and re-attach send it no power command.
func TestIPMIDriverAgainstSimulator(t *testing.T) {
	url := needIronic(t)
	sim := rig.StartFakeBMC(t)
	p := newProv(t, url, nil)
	ctx := ctxT(t)
	h := provisioner.Host{
		Name:           uniqName("ipmi"),
		BMC:            api.BMC{Address: sim.Addr},
		Username:       "admin",
		Password:       "password",
		BootMACAddress: fakeHost("x").BootMACAddress,
	}
	h.ProvisioningID = must(t, "register")(p.Register(ctx, h)).ProvisioningID
	n := wantState(t, url, h.ProvisioningID, "manageable")
	if n.Driver != "ipmi" || n.DriverInfo["ipmi_cipher_suite"] != "3" || n.PowerState != "power off" {
		t.Fatalf("node driver %q, cipher suite %v, power %q; want ipmi, 3 and the simulator's power off",
			n.Driver, n.DriverInfo["ipmi_cipher_suite"], n.PowerState)
	}
	if l := sim.PowerLines(); len(l) != 0 {
		t.Fatalf("registration sent power commands: %v", l)
	}

	must(t, "power on")(p.SetPower(ctx, h, true))
	must(t, "power off")(p.SetPower(ctx, h, false))
	must(t, "power on")(p.SetPower(ctx, h, true))
	l := sim.PowerLines()
	if len(l) != 3 || !strings.Contains(l[0], "powered on") || !strings.Contains(l[1], "remove power") {
		t.Fatalf("simulator executed %v, want on, off, on", l)
	}

	must(t, "adopt")(p.Adopt(ctx, h))
	wantState(t, url, h.ProvisioningID, "active")
	must(t, "detach")(p.Detach(ctx, h))
	if n, _ := rawNode(t, url, h.ProvisioningID); n != nil {
		t.Fatalf("node still in Ironic after detach: %s", n.ProvisionState)
	}
	h.ProvisioningID = ""
	h.ProvisioningID = must(t, "re-register")(p.Register(ctx, h)).ProvisioningID
	must(t, "re-adopt")(p.Adopt(ctx, h))
	n = wantState(t, url, h.ProvisioningID, "active")
	if n.PowerState != "power on" {
		t.Fatalf("power %q after re-attach, want power on", n.PowerState)
	}
	if l2 := sim.PowerLines(); len(l2) != len(l) {
		t.Fatalf("adopt/detach/attach sent power commands: %v", l2[len(l):])
	}
	must(t, "delete")(p.Delete(ctx, h))
}
