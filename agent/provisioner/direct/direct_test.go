package direct_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/agent/provisioner/direct"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// The direct provisioner against the real simulator, through real bmclib.

func setup(t *testing.T, hosts int) (*bmcsim.Sim, *direct.Provisioner, *fence.Holder, *guard.MemoryAudit, string) {
	t.Helper()
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	sim, err := bmcsim.Start(bmcsim.Config{Hosts: hosts, AuditPath: audit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	h := fence.NewHolder(nil)
	h.Set(fence.Lease{Rack: "r1", Holder: "t", Epoch: 7, TTL: time.Hour, Deadline: time.Now().Add(time.Hour)})
	ma := &guard.MemoryAudit{}
	g := guard.NewGuard(h, ma)
	p, err := direct.New(direct.Config{Guard: g, BMC: bmc.Options{Timeout: 10 * time.Second,
		UserAgent: bmc.AgentUserAgent("test", "t", "r1", h)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return sim, p, h, ma, audit
}

func host(sim *bmcsim.Sim, i int, password string) provisioner.Host {
	return provisioner.Host{Name: "h" + string(rune('0'+i)), Username: "admin", Password: password,
		BMC: wire.BMC{Address: sim.Address(i)}, BootMACAddress: sim.MAC(i), Online: true}
}

func auditCount(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

func TestLifecycleThroughVirtualMedia(t *testing.T) {
	sim, p, _, ma, audit := setup(t, 1)
	ctx := context.Background()
	h := host(sim, 0, "password")

	res, err := p.Register(ctx, h)
	if err != nil || res.PoweredOn == nil {
		t.Fatalf("register: %v %+v", err, res)
	}
	if bd := res.BMCDetails; bd == nil || bd.Protocol != "redfish" || bd.Auth != "session" || bd.System != "/redfish/v1/Systems/1" ||
		bd.Manager != "/redfish/v1/Managers/1" || bd.VirtualMedia != "/redfish/v1/Managers/1/VirtualMedia/CD1" ||
		bd.VirtualMediaMethod != "actions" || bd.RedfishVersion == "" || bd.FirmwareVersion == "" || len(bd.Problems) != 0 {
		t.Fatalf("register BMC details = %+v", res.BMCDetails)
	}
	res, err = p.Inspect(ctx, h)
	if err != nil {
		t.Fatalf("inspect: %v", err)
	}
	hw := res.HardwareDetails
	if hw == nil || len(hw.NICs) == 0 || len(hw.CPUs) == 0 || hw.MemoryMiB == 0 {
		t.Fatalf("inspect gave %+v", hw)
	}
	foundMAC := false
	for _, n := range hw.NICs {
		foundMAC = foundMAC || strings.EqualFold(n.MAC, sim.MAC(0))
	}
	if !foundMAC {
		t.Errorf("inventory NICs %+v lack the boot MAC %s", hw.NICs, sim.MAC(0))
	}
	if n := auditCount(t, audit); n != 0 {
		t.Fatalf("register and inspect made %d mutating calls", n)
	}

	h.Image = &wire.Image{URL: "http://images.example/os.iso"}
	if _, err := p.Provision(ctx, h); err != nil {
		t.Fatalf("provision: %v", err)
	}
	st := sim.State(0)
	if !st.Media.Inserted || st.Media.Image != h.Image.URL || st.Power != "On" || st.LastBoot != "Cd" {
		t.Fatalf("after provision: %+v", st)
	}
	if _, err := p.Deprovision(ctx, h); err != nil {
		t.Fatalf("deprovision: %v", err)
	}
	st = sim.State(0)
	if st.Media.Inserted || st.Power != "Off" {
		t.Fatalf("after deprovision: %+v", st)
	}
	// Adopt, detach and maintenance change nothing on the BMC.
	before := auditCount(t, audit)
	if _, err := p.Adopt(ctx, h); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Detach(ctx, h); err != nil {
		t.Fatal(err)
	}
	if _, err := p.SetMaintenance(ctx, h, true); err != nil {
		t.Fatal(err)
	}
	if n := auditCount(t, audit); n != before {
		t.Fatalf("adopt/detach/maintenance made %d mutating calls", n-before)
	}
	for _, r := range ma.Records() {
		if r.Epoch != 7 || r.Outcome != "ok" {
			t.Errorf("guard audit record %+v, want epoch 7 and ok", r)
		}
	}
	b, _ := os.ReadFile(audit)
	if !strings.Contains(string(b), "epoch=7") {
		t.Errorf("BMC audit lacks the User-Agent with the epoch:\n%s", b)
	}
}

func TestBadCredentialsAndFencing(t *testing.T) {
	sim, p, holder, _, audit := setup(t, 2)
	ctx := context.Background()
	if _, err := p.Register(ctx, host(sim, 0, "s3cr3t-pw")); !errors.Is(err, errclass.ErrAuth) {
		t.Fatalf("register with a wrong password: %v, want ErrAuth", err)
	} else if strings.Contains(err.Error(), "s3cr3t-pw") {
		t.Fatalf("the error leaks the password: %v", err)
	}
	// A BMC answering 500 is transient; once it heals the next call works
	// with nothing else done (the session is dropped on failure).
	h := host(sim, 1, "password")
	if _, err := p.Register(ctx, h); err != nil {
		t.Fatal(err)
	}
	if err := sim.SetFault(1, bmcsim.FaultHTTP500); err != nil {
		t.Fatal(err)
	}
	if _, err := p.PowerState(ctx, h); !errors.Is(err, errclass.ErrTransient) {
		t.Fatalf("power read against http500: %v, want ErrTransient", err)
	}
	if err := sim.SetFault(1, bmcsim.FaultNone); err != nil {
		t.Fatal(err)
	}
	if _, err := p.PowerState(ctx, h); err != nil {
		t.Fatalf("power read after the BMC healed: %v", err)
	}

	// Lease gone: every mutation is refused before reaching the BMC.
	holder.Clear()
	before := auditCount(t, audit)
	if _, err := p.SetPower(ctx, h, true); !errors.Is(err, guard.ErrFenced) {
		t.Fatalf("power on without a lease: %v, want ErrFenced", err)
	}
	h.Image = &wire.Image{URL: "http://x/y.iso"}
	if _, err := p.Provision(ctx, h); !errors.Is(err, guard.ErrFenced) {
		t.Fatalf("provision without a lease: %v, want ErrFenced", err)
	}
	if n := auditCount(t, audit); n != before {
		t.Fatalf("%d mutating calls reached the BMC without a lease", n-before)
	}
}
