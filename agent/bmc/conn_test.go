package bmc

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/testkit/bmcsim"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// These tests drive Conn's Redfish layer (gofish, as the agent does)
// against bmcsim.

func TestRedfishOperations(t *testing.T) {
	audit := filepath.Join(t.TempDir(), "sim-audit.jsonl")
	sim := startSim(t, bmcsim.Config{Hosts: 2, AuditPath: audit})
	ctx := testCtx(t)
	mem := &guard.MemoryAudit{}
	g, lease := leasedGuard(time.Minute, mem)
	opts := Options{Timeout: 20 * time.Second, UserAgent: AgentUserAgent("test", "agent-a", "r1", lease)}
	c, err := Dial(ctx, Target{Address: sim.Address(1), Username: "admin", Password: "password"}, opts)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.Close(ctx)

	on, err := c.PowerState(ctx)
	if err != nil || on {
		t.Fatalf("power state = %v, %v; want off, nil", on, err)
	}
	if err := c.SetBootDevice(ctx, g, "h1", "pxe", false); err != nil {
		t.Fatalf("boot pxe: %v", err)
	}
	st := sim.State(1)
	if st.BootOverride != (bmcsim.BootOverride{Target: "Pxe", Enabled: "Once", Mode: "UEFI"}) {
		t.Fatalf("boot override after SetBootDevice = %+v", st.BootOverride)
	}
	if err := c.SetPower(ctx, g, "h1", true); err != nil {
		t.Fatalf("power on: %v", err)
	}
	if on, err := c.PowerState(ctx); err != nil || !on {
		t.Fatalf("power state after on = %v, %v", on, err)
	}
	if st := sim.State(1); st.LastBoot != "Pxe" || st.BootOverride.Enabled != "Disabled" {
		t.Fatalf("after power on with a Once PXE override: lastBoot %q, override %+v", st.LastBoot, st.BootOverride)
	}
	if err := c.SetBootDevice(ctx, g, "h1", "disk", true); err != nil {
		t.Fatalf("boot disk persistent: %v", err)
	}
	if st := sim.State(1); st.BootOverride.Target != "Hdd" || st.BootOverride.Enabled != "Continuous" {
		t.Fatalf("persistent disk override = %+v", st.BootOverride)
	}
	if err := c.SetPower(ctx, g, "h1", false); err != nil {
		t.Fatalf("power off: %v", err)
	}
	if sim.State(1).Power != "Off" {
		t.Fatalf("sim power after off = %s", sim.State(1).Power)
	}
	if err := c.InsertMedia(ctx, g, "h1", "http://images/ipa.iso"); err != nil {
		t.Fatalf("insert media: %v", err)
	}
	if m := sim.State(1).Media; !m.Inserted || m.Image != "http://images/ipa.iso" {
		t.Fatalf("media after insert = %+v", m)
	}
	// Inserting a different image ejects the first one first, so it works twice.
	if err := c.InsertMedia(ctx, g, "h1", "http://images/other.iso"); err != nil {
		t.Fatalf("second insert: %v", err)
	}
	if err := c.EjectMedia(ctx, g, "h1"); err != nil {
		t.Fatalf("eject: %v", err)
	}
	if m := sim.State(1).Media; m.Inserted {
		t.Fatalf("media after eject = %+v", m)
	}
	hd, err := c.Inventory(ctx)
	if err != nil {
		t.Fatalf("inventory: %v", err)
	}
	if len(hd.CPUs) != 2 || hd.CPUs[0].Cores != 16 || hd.MemoryMiB != 65536 || len(hd.Disks) != 1 || hd.Disks[0].SizeBytes == 0 {
		t.Fatalf("inventory = %+v", hd)
	}
	if len(hd.NICs) != 1 || hd.NICs[0].MAC != sim.MAC(1) {
		t.Fatalf("inventory NICs = %+v, want MAC %s", hd.NICs, sim.MAC(1))
	}
	if hd.Manufacturer != "Rackfence" || hd.SerialNumber == "" || hd.BIOSVersion != "1.2.3" {
		t.Fatalf("inventory system fields = %+v", hd)
	}
	// BMC reset ends every session on the BMC; the next call logs in again.
	if err := c.resetBMC(ctx, g, "h1"); err != nil {
		t.Fatalf("bmc reset: %v", err)
	}
	if sim.State(1).BMCResets != 1 {
		t.Fatalf("bmc resets = %d", sim.State(1).BMCResets)
	}
	if _, err := c.PowerState(ctx); err != nil {
		t.Fatalf("power state after BMC reset: %v", err)
	}
	// Other BMC untouched.
	if st := sim.State(0); st.Mutations != 0 {
		t.Fatalf("BMC 0 saw %d mutations", st.Mutations)
	}

	// Guard audit: every mutating call recorded with epoch 7 and ok.
	recs := mem.Records()
	if len(recs) != 8 {
		t.Fatalf("guard audit has %d records, want 8: %+v", len(recs), recs)
	}
	for _, r := range recs {
		if r.Epoch != 7 || r.Outcome != "ok" || r.Host != "h1" || r.End.Before(r.Start) {
			t.Fatalf("audit record %+v", r)
		}
	}

	// The simulator's audit: each mutating request carries the agent's
	// User-Agent with the epoch, and no line holds the password.
	lines := readAudit(t, audit)
	if len(lines) == 0 {
		t.Fatal("sim audit is empty")
	}
	var sawReset bool
	for _, l := range lines {
		if l.UserAgent != "rackfence-agent/test (agent-a; rack=r1; epoch=7)" {
			t.Fatalf("audit line with User-Agent %q: %+v", l.UserAgent, l)
		}
		if strings.Contains(l.Body, "password") {
			t.Fatalf("audit line leaks the password: %+v", l)
		}
		if _, err := time.Parse(time.RFC3339Nano, l.Time); err != nil {
			t.Fatalf("audit time %q: %v", l.Time, err)
		}
		if l.Path == "/redfish/v1/Systems/1/Actions/ComputerSystem.Reset" && strings.Contains(l.Body, "ForceOff") {
			sawReset = true
		}
	}
	if !sawReset {
		t.Fatalf("no ForceOff in sim audit: %+v", lines)
	}
}

func readAudit(t testing.TB, path string) []bmcsim.AuditLine {
	t.Helper()
	lines, err := bmcsim.ReadAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

func TestWrongPasswordIsAuthError(t *testing.T) {
	sim := startSim(t, bmcsim.Config{Hosts: 1})
	ctx := testCtx(t)
	secret := "not-the-password-s3cret"
	_, err := Dial(ctx, Target{Address: sim.Address(0), Username: "admin", Password: secret}, Options{Timeout: 10 * time.Second})
	t.Logf("wrong password: %v", err)
	if !errors.Is(err, errclass.ErrAuth) {
		t.Fatalf("dial with a wrong password: %v; want errclass.ErrAuth", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Fatalf("error leaks the password: %v", err)
	}
}

func TestFaultsSurfaceAsErrorClasses(t *testing.T) {
	testenv.SkipShort(t) // waits out BMC timeouts: seconds, not the fast layer
	sim := startSim(t, bmcsim.Config{Hosts: 1})
	ctx := testCtx(t)
	g, _ := leasedGuard(time.Minute, nil)
	c, err := Dial(ctx, Target{Address: sim.Address(0), Username: "admin", Password: "password"}, Options{Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)

	for _, tc := range []struct {
		mode string
		want error
	}{
		{bmcsim.FaultHTTP500, errclass.ErrTransient},
		{bmcsim.FaultRefuseAuth, errclass.ErrAuth},
		{bmcsim.FaultHang, errclass.ErrTransient},
	} {
		if err := sim.SetFault(0, tc.mode); err != nil {
			t.Fatal(err)
		}
		_, err := c.PowerState(ctx)
		t.Logf("fault %s: %v", tc.mode, err)
		if !errors.Is(err, tc.want) {
			t.Fatalf("fault %s: power state error %v; want %v", tc.mode, err, tc.want)
		}
		err = c.SetPower(ctx, g, "h0", true)
		if !errors.Is(err, tc.want) {
			t.Fatalf("fault %s: set power error %v; want %v", tc.mode, err, tc.want)
		}
		if err := sim.SetFault(0, bmcsim.FaultNone); err != nil {
			t.Fatal(err)
		}
		// Healed: the same Conn works again (logging in anew if needed).
		if _, err := c.PowerState(ctx); err != nil {
			t.Fatalf("after healing %s: %v", tc.mode, err)
		}
	}
	if sim.State(0).Power != "Off" {
		t.Fatal("a faulted power-on reached the host")
	}
}

func TestUnreachableIsTransient(t *testing.T) {
	sim := startSim(t, bmcsim.Config{Hosts: 1})
	addr := sim.Address(0)
	_ = sim.Close()
	_, err := Dial(testCtx(t), Target{Address: addr, Username: "admin", Password: "password"}, Options{Timeout: 5 * time.Second})
	t.Logf("unreachable: %v", err)
	if !errors.Is(err, errclass.ErrTransient) {
		t.Fatalf("dial to a closed port: %v; want errclass.ErrTransient", err)
	}
}

func TestUnsupported(t *testing.T) {
	sim := startSim(t, bmcsim.Config{Hosts: 1})
	ctx := testCtx(t)
	g, _ := leasedGuard(time.Minute, nil)
	c, err := Dial(ctx, Target{Address: sim.Address(0), Username: "admin", Password: "password"}, Options{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if err := c.SetBootDevice(ctx, g, "h0", "floppy-of-doom", false); !errors.Is(err, errclass.ErrUnsupported) {
		t.Fatalf("bad boot device: %v; want errclass.ErrUnsupported", err)
	}
	if _, err := Dial(ctx, Target{Address: "gopher://x"}, Options{}); !errors.Is(err, errclass.ErrFailed) {
		t.Fatalf("bad scheme: %v; want errclass.ErrFailed", err)
	}
}

func TestTLSRedfish(t *testing.T) {
	sim := startSim(t, bmcsim.Config{Hosts: 1, TLS: true})
	ctx := testCtx(t)
	// Verification on: the self-signed certificate is refused.
	if _, err := Dial(ctx, Target{Address: sim.Address(0), Username: "admin", Password: "password"}, Options{Timeout: 5 * time.Second}); err == nil {
		t.Fatal("dial with certificate verification accepted a self-signed certificate")
	}
	c, err := Dial(ctx, Target{Address: sim.Address(0), Username: "admin", Password: "password", Insecure: true}, Options{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("dial with verification off: %v", err)
	}
	defer c.Close(ctx)
	if _, err := c.PowerState(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestPoolReusesSessions(t *testing.T) {
	sim := startSim(t, bmcsim.Config{Hosts: 2})
	ctx := testCtx(t)
	p := NewPool(Options{Timeout: 10 * time.Second})
	tg := Target{Address: sim.Address(0), Username: "admin", Password: "password"}
	c1, err := p.Get(ctx, "h0", tg)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := p.Get(ctx, "h0", tg)
	if err != nil || c1 != c2 {
		t.Fatalf("second Get: %p %p %v; want the same Conn", c1, c2, err)
	}
	for i := 0; i < 5; i++ {
		if _, err := c2.PowerState(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := sim.State(0).Sessions; n != 1 {
		t.Fatalf("BMC has %d sessions after reuse; want 1", n)
	}
	// A changed target replaces the Conn (and logs the old one out).
	tg2 := tg
	tg2.Address = sim.Address(1)
	c3, err := p.Get(ctx, "h0", tg2)
	if err != nil || c3 == c1 {
		t.Fatalf("Get with a new target: %v", err)
	}
	if n := sim.State(0).Sessions; n != 0 {
		t.Fatalf("old BMC still has %d sessions", n)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := sim.State(1).Sessions; n != 0 {
		t.Fatalf("after pool Close the BMC has %d sessions; want 0", n)
	}
	if _, err := p.Get(ctx, "h0", tg); !errors.Is(err, errclass.ErrTransient) {
		t.Fatalf("Get after Close: %v", err)
	}
}

// Many hosts driven at once through one Pool (run under -race in CI).
func TestPoolConcurrentHosts(t *testing.T) {
	const hosts = 16
	sim := startSim(t, bmcsim.Config{Hosts: hosts})
	ctx := testCtx(t)
	g, _ := leasedGuard(time.Hour, nil)
	p := NewPool(Options{Timeout: 30 * time.Second, MutationTimeout: 30 * time.Second})
	defer p.Close(ctx)
	errs := make(chan error, hosts)
	for i := 0; i < hosts; i++ {
		go func(i int) {
			host := fmt.Sprintf("h%d", i)
			tg := Target{Address: sim.Address(i), Username: "admin", Password: "password"}
			for round := 0; round < 3; round++ {
				c, err := p.Get(ctx, host, tg)
				if err != nil {
					errs <- err
					return
				}
				if err := c.SetPower(ctx, g, host, round%2 == 0); err != nil {
					errs <- err
					return
				}
				if _, err := c.PowerState(ctx); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}(i)
	}
	for i := 0; i < hosts; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if p.Len() != hosts {
		t.Fatalf("pool holds %d Conns; want %d", p.Len(), hosts)
	}
	for i := 0; i < hosts; i++ {
		if st := sim.State(i); st.Power != "On" || st.Sessions != 1 {
			t.Fatalf("BMC %d: %+v; want On with one session", i, st)
		}
	}
}
