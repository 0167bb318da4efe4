package ironic_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/agent/provisioner/ironic"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// startSim starts n Redfish BMCs (rackfence's bmcsim) with an audit file.
func startSim(t testing.TB, n int, on bool) (*bmcsim.Sim, string) {
	t.Helper()
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	sim, err := bmcsim.Start(bmcsim.Config{Hosts: n, AuditPath: audit, PowerOn: on})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	return sim, audit
}

func auditLines(t testing.TB, path string) []bmcsim.AuditLine {
	t.Helper()
	lines, err := bmcsim.ReadAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

func resets(lines []bmcsim.AuditLine) []string {
	var r []string
	for _, l := range lines {
		if strings.Contains(l.Path, "Reset") {
			r = append(r, l.Body)
		}
	}
	return r
}

func simHost(sim *bmcsim.Sim, i int, name string) provisioner.Host {
	return provisioner.Host{
		Name:           name,
		BMC:            wire.BMC{Address: sim.Address(i)},
		Username:       "admin",
		Password:       "password",
		BootMACAddress: sim.MAC(i),
	}
}

func requireSushy(t testing.TB) {
	_, err := os.Stat("/usr/lib/python3/dist-packages/sushy")
	testenv.RequirePeer(t, err == nil, "python3-sushy (Ironic's Redfish client)")
}

// The redfish driver against rackfence-bmcsim: manage reads power through
// Ironic's own Redfish client (sushy) and sends no command; power on/off
// through Ironic reaches the simulator; adopt, detach and re-attach send it
// nothing.
func TestRedfishDriverAgainstBMCSim(t *testing.T) {
	url := needIronic(t)
	requireSushy(t)
	sim, audit := startSim(t, 2, true)
	var inventoryCalls int
	p := newProv(t, url, func(c *ironic.Config) {
		c.RedfishInspect = "no-inspect" // the BMC inventory fallback
		c.Inventory = func(ctx context.Context, h provisioner.Host) (*wire.HardwareDetails, error) {
			inventoryCalls++
			return &wire.HardwareDetails{Manufacturer: "bmcsim", MemoryMiB: 4096}, nil
		}
	})
	ctx := ctxT(t)
	h := simHost(sim, 0, uniqName("rf"))

	r := must(t, "register")(p.Register(ctx, h))
	h.ProvisioningID = r.ProvisioningID
	n := wantState(t, url, h.ProvisioningID, "manageable")
	if n.Driver != "redfish" || n.PowerState != "power on" {
		t.Fatalf("node driver %q power %q, want redfish and the simulator's \"power on\" read through sushy", n.Driver, n.PowerState)
	}
	if got := auditLines(t, audit); len(got) != 0 {
		t.Fatalf("registration sent the BMC mutating calls: %+v", got)
	}

	// Inspect interface no-inspect (Config.RedfishInspect): details come
	// from the BMC inventory.
	ri := must(t, "inspect")(p.Inspect(ctx, h))
	if ri.HardwareDetails == nil || ri.HardwareDetails.Manufacturer != "bmcsim" || inventoryCalls != 1 {
		t.Fatalf("inspect details %+v (inventory calls %d), want the BMC inventory's", ri.HardwareDetails, inventoryCalls)
	}

	must(t, "power off")(p.SetPower(ctx, h, false))
	if s := sim.State(0).Power; s != "Off" {
		t.Fatalf("simulator power %q after power off through Ironic", s)
	}
	must(t, "power on")(p.SetPower(ctx, h, true))
	if s := sim.State(0).Power; s != "On" {
		t.Fatalf("simulator power %q after power on through Ironic", s)
	}
	rs := resets(auditLines(t, audit))
	if len(rs) != 2 || !strings.Contains(rs[0], "ForceOff") || !strings.Contains(rs[1], "On") {
		t.Fatalf("simulator saw resets %v, want ForceOff then On", rs)
	}
	pr := must(t, "power state")(p.PowerState(ctx, h))
	if pr.PoweredOn == nil || !*pr.PoweredOn {
		t.Fatalf("power state %v, want on", pr.PoweredOn)
	}

	// Externally provisioned: adopt, detach (the node is gone) and attach
	// (re-register, re-adopt) send the BMC no power command.
	before := len(auditLines(t, audit))
	adoptDetachReattach(ctx, t, p, url, &h)
	if after := auditLines(t, audit)[before:]; len(resets(after)) != 0 {
		t.Fatalf("adopt/detach/attach sent power commands: %+v", after)
	}
	if s := sim.State(0).Power; s != "On" {
		t.Fatalf("host power %q after detach and re-attach, want On", s)
	}
	must(t, "delete")(p.Delete(ctx, h))

	// Wrong password: Ironic's verify fails; a registration error carrying
	// Ironic's last_error.
	bad := simHost(sim, 1, uniqName("rfbad"))
	bad.Password = "wrong"
	cctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	_, err := p.Register(cctx, bad)
	if !errors.Is(err, ironic.ErrVerifyAuth) || !errors.Is(err, errclass.ErrAuth) || !strings.Contains(err.Error(), "401") {
		t.Fatalf("register with a wrong password: %v, want ErrVerifyAuth (errclass.ErrAuth) with Ironic's last_error", err)
	}
	if strings.Contains(err.Error(), "wrong") {
		t.Fatalf("the error reveals the password: %v", err)
	}
	t.Logf("wrong password: %v", err)
	// Fixed credentials: registering again verifies and succeeds.
	bad.Password = "password"
	bad.ProvisioningID = must(t, "register with fixed password")(p.Register(ctx, bad)).ProvisioningID
	must(t, "delete")(p.Delete(ctx, bad))
}
