package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/provisioner/fake"
)

// recordingProv hands every call to the fake and keeps the last Host each
// operation was given, so a test sees what the agent resolved.
type recordingProv struct {
	provisioner.Provisioner
	mu   sync.Mutex
	last map[string]provisioner.Host // "host/op"
}

func (p *recordingProv) keep(op string, h provisioner.Host) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last[h.Name+"/"+op] = h
}

func (p *recordingProv) got(host, op string) (provisioner.Host, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h, ok := p.last[host+"/"+op]
	return h, ok
}

func (p *recordingProv) Register(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	p.keep("register", h)
	return p.Provisioner.Register(ctx, h)
}

func (p *recordingProv) Provision(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	p.keep("provision", h)
	return p.Provisioner.Provision(ctx, h)
}

// errorHas is a WaitHost condition: the host reports an error containing
// every one of parts.
func errorHas(parts ...string) func(h *wire.Host) error {
	return func(h *wire.Host) error {
		if h.Status == nil || h.Status.ErrorMessage == "" {
			return fmt.Errorf("no error yet (status %+v)", h.Status)
		}
		for _, p := range parts {
			if !strings.Contains(h.Status.ErrorMessage, p) {
				return fmt.Errorf("error %q lacks %q", h.Status.ErrorMessage, p)
			}
		}
		return nil
	}
}

// TestConfigDataReachesTheProvisioner: the records a host names are
// revealed and handed to the provisioner (user data as is, network and
// meta data checked as JSON, a lone "value" key accepted); a missing
// record, a missing key or invalid JSON stops the action before the
// provisioner is called, with an error naming the record and key and what
// to run; fixing the record lets the host go on.
func TestConfigDataReachesTheProvisioner(t *testing.T) {
	var rec *recordingProv
	c, r, _ := newRack(t, agentOpts{tune: func(cfg *Config) {
		rec = &recordingProv{Provisioner: cfg.Provisioner, last: map[string]provisioner.Host{}}
		cfg.Provisioner = rec
		cfg.StateMachine.BackoffBase = 100 * time.Millisecond
	}})
	ctx := ctxT(t)
	set := func(name string, data map[string]string) {
		t.Helper()
		if err := c.Admin.SetCredentials(ctx, name, wire.Credentials{Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	const ud = "#cloud-config\nhostname: d0\n"
	const nd = `{"links":[{"id":"eth0","type":"phy","ethernet_mac_address":"02:00:00:00:00:01"}],"networks":[],"services":[]}`
	const md = `{"public_keys":{"k":"ssh-ed25519 AAAA k@x"}}`
	const pnd = `{"links":[],"networks":[],"services":[]}`

	// The ramdisk's network data is needed from registration on: missing,
	// the host waits and nothing is registered.
	h := fakeHost("d0", "r1", 0)
	h.PreprovisioningNetworkData = &wire.SecretReference{Name: "pnd"}
	c.Apply(h)
	c.WaitHost("d0", waitLong, "the missing record reported", errorHas(`secret "pnd" not found`, "rackfencectl credentials set pnd --from-file networkData=PATH"))
	if n := countOps(r.prov.CallsOf("d0"), fake.OpRegister); n != 0 {
		t.Fatalf("registered %d times without the ramdisk's network data", n)
	}
	set("pnd", map[string]string{"value": pnd}) // a lone "value" key
	c.WaitHost("d0", waitLong, "available", stateIs(wire.StateAvailable, wire.OpOK))
	if got, _ := rec.got("d0", "register"); string(got.PreprovisioningNetworkData) != pnd || got.ConfigDrive != nil {
		t.Fatalf("register got %q, config drive %+v", got.PreprovisioningNetworkData, got.ConfigDrive)
	}

	// Provisioning needs every record: each fault stops it before the
	// provisioner is called, and names the record and key.
	set("ud", map[string]string{"userData": ud})
	set("nd", map[string]string{"networkData": "{not json"})
	set("md", map[string]string{"other": "x"})
	h.Image = &wire.Image{URL: "http://images.example/os.iso"}
	h.UserData = &wire.SecretReference{Name: "ud"}
	h.NetworkData = &wire.SecretReference{Name: "nd"}
	h.MetaData = &wire.SecretReference{Name: "md"}
	c.Apply(h)
	c.WaitHost("d0", waitLong, "invalid network data reported", errorHas(`networkData`, `secret "nd"`, "not valid JSON"))
	set("nd", map[string]string{"networkData": nd})
	c.WaitHost("d0", waitLong, "missing key reported", errorHas(`secret "md" has no key "metaData"`, `keys "other"`))
	set("md", map[string]string{"metaData": `["not an object"]`})
	c.WaitHost("d0", waitLong, "meta data not an object reported", errorHas(`secret "md"`, "not an object"))
	if n := countOps(r.prov.CallsOf("d0"), fake.OpProvision); n != 0 {
		t.Fatalf("provisioned %d times half-configured", n)
	}
	if st := c.Host("d0").Status; st.ProvisioningState != wire.StateProvisioning {
		t.Fatalf("state %s while a record is wrong, want provisioning", st.ProvisioningState)
	}
	set("md", map[string]string{"metaData": md})
	c.WaitHost("d0", waitLong, "provisioned", stateIs(wire.StateProvisioned, wire.OpOK))
	got, ok := rec.got("d0", "provision")
	if !ok || got.ConfigDrive == nil {
		t.Fatalf("provision got no config drive: %+v", got)
	}
	if cd := got.ConfigDrive; string(cd.UserData) != ud || string(cd.NetworkData) != nd || string(cd.MetaData) != md || string(got.PreprovisioningNetworkData) != pnd {
		t.Fatalf("provision got %q %q %q %q", cd.UserData, cd.NetworkData, cd.MetaData, got.PreprovisioningNetworkData)
	}
	if n := countOps(r.prov.CallsOf("d0"), fake.OpProvision); n != 1 {
		t.Fatalf("%d provision calls, want 1", n)
	}
}
