package ironic_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/agent/provisioner/ironic"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// One real Ironic for the package (rig.LaunchIronic: deploy/peers/ironic.sh,
// like CI and people use it); tests that wipe its database start their own
// with rig.StartIronic. Under -short none is started: every test that
// needs one skips.
var (
	sharedIronic    *rig.Ironic
	sharedIronicErr error
)

func TestMain(m *testing.M) {
	flag.Parse()
	if !testing.Short() {
		sharedIronic, sharedIronicErr = rig.LaunchIronic("shared")
	}
	code := m.Run()
	if sharedIronic != nil {
		_ = sharedIronic.Stop()
	}
	os.Exit(code)
}

// needIronic returns the shared Ironic's URL: it skips under -short, and a
// missing Ironic fails in CI and skips loudly elsewhere.
func needIronic(t testing.TB) string {
	t.Helper()
	testenv.RequirePeer(t, !errors.Is(sharedIronicErr, rig.ErrNoIronic), rig.ErrNoIronic.Error())
	if sharedIronic == nil {
		t.Fatal(sharedIronicErr)
	}
	return sharedIronic.URL
}

// recorder is an Auditor keeping every guarded call.
type recorder struct {
	n   atomic.Int64
	ops chan guard.AuditRecord
}

func (r *recorder) Audit(a guard.AuditRecord) {
	r.n.Add(1)
	select {
	case r.ops <- a:
	default:
	}
}

// newGuard returns a guard holding a valid one-hour lease.
func newGuard(rec *recorder) *guard.Guard {
	h := fence.NewHolder(nil)
	h.Set(fence.Lease{Rack: "r1", Epoch: 1, TTL: time.Hour, Deadline: time.Now().Add(time.Hour)})
	if rec == nil {
		return guard.NewGuard(h, nil)
	}
	return guard.NewGuard(h, rec)
}

// newProv connects a provisioner to url; mod adjusts the config.
func newProv(t testing.TB, url string, mod func(*ironic.Config)) *ironic.Provisioner {
	t.Helper()
	cfg := ironic.Config{URL: url, Guard: newGuard(nil), PollInterval: 100 * time.Millisecond,
		WaitTimeout: 2 * time.Minute}
	if mod != nil {
		mod(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := ironic.New(ctx, cfg)
	if err != nil {
		t.Fatalf("ironic.New(%s): %v", url, err)
	}
	return p
}

func fakeHW(c *ironic.Config) { c.Driver = "fake-hardware" }

var hostSeq atomic.Int64

// uniqName is a host name unique across test runs against one Ironic.
func uniqName(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, os.Getpid()%10000, hostSeq.Add(1))
}

// fakeHost is a host for the fake-hardware driver (Ironic talks to no BMC).
func fakeHost(prefix string) provisioner.Host {
	i := hostSeq.Add(1)
	return provisioner.Host{
		Name:           fmt.Sprintf("%s-%d-%d", prefix, os.Getpid()%10000, i),
		BMC:            apiBMC("redfish+http://127.0.0.1:9/redfish/v1/Systems/1"),
		Username:       "admin",
		Password:       "password",
		BootMACAddress: fmt.Sprintf("52:54:%02x:%02x:%02x:%02x", (os.Getpid()>>8)&0xff, os.Getpid()&0xff, (i>>8)&0xff, i&0xff),
	}
}

// rawNode reads a node straight from Ironic (test-side checks).
func rawNode(t testing.TB, url, id string) (*nodes.Node, error) {
	t.Helper()
	sc, err := noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: url + "/v1/"})
	if err != nil {
		t.Fatal(err)
	}
	sc.Microversion = ironic.Microversion
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := nodes.Get(ctx, sc, id).Extract()
	if gophercloud.ResponseCodeIs(err, 404) {
		return nil, nil
	}
	return n, err
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// must returns a checker of one provisioner call: must(t, "x")(p.X(ctx, h)).
func must(t testing.TB, what string) func(provisioner.Result, error) provisioner.Result {
	return func(r provisioner.Result, err error) provisioner.Result {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if r.InProgress {
			t.Fatalf("%s: still in progress after the wait timeout: %+v", what, r)
		}
		return r
	}
}

func wantState(t testing.TB, url, id, state string) *nodes.Node {
	t.Helper()
	n, err := rawNode(t, url, id)
	if err != nil || n == nil {
		t.Fatalf("read node %s: %v (node %v)", id, err, n)
	}
	if n.ProvisionState != state {
		t.Fatalf("node %s is %q, want %q (last_error %q)", id, n.ProvisionState, state, n.LastError)
	}
	return n
}

// operatorPatch is an operator's direct fix of a node in Ironic (JSON
// patch over plain HTTP, outside the provisioner and its guard).
func operatorPatch(t testing.TB, url, id string, patch string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPatch, url+"/v1/nodes/"+id, strings.NewReader(patch))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Ironic-API-Version", ironic.Microversion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("PATCH node %s: %d %s", id, resp.StatusCode, b)
	}
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// adoptDetachReattach adopts h (externally provisioned: to active), detaches
// it (the node leaves Ironic), then attaches it again (re-register and
// re-adopt, to active); it returns the node as Ironic has it at the end.
// The callers check that the BMC saw no power command meanwhile.
func adoptDetachReattach(ctx context.Context, t testing.TB, p *ironic.Provisioner, url string, h *provisioner.Host) *nodes.Node {
	t.Helper()
	must(t, "adopt")(p.Adopt(ctx, *h))
	wantState(t, url, h.ProvisioningID, "active")
	must(t, "detach")(p.Detach(ctx, *h))
	if n, _ := rawNode(t, url, h.ProvisioningID); n != nil {
		t.Fatalf("node still in Ironic after detach: %s", n.ProvisionState)
	}
	h.ProvisioningID = ""
	h.ProvisioningID = must(t, "re-register")(p.Register(ctx, *h)).ProvisioningID
	must(t, "re-adopt")(p.Adopt(ctx, *h))
	return wantState(t, url, h.ProvisioningID, "active")
}

// ipmiCase is a provisioner on url (Ironic's ipmi driver) and a host on
// the IPMI BMC at addr (ipmi://…, user admin / password password).
func ipmiCase(t testing.TB, url, prefix, addr string) (*ironic.Provisioner, context.Context, provisioner.Host) {
	t.Helper()
	h := provisioner.Host{Name: uniqName(prefix), BMC: apiBMC(addr),
		Username: "admin", Password: "password", BootMACAddress: fakeHost("x").BootMACAddress}
	return newProv(t, url, nil), ctxT(t), h
}

// registerIPMI registers h through p and checks that Ironic manages it with
// the ipmi driver (cipher suite 3), having read the simulator's power off.
func registerIPMI(ctx context.Context, t testing.TB, p *ironic.Provisioner, url string, h *provisioner.Host) {
	t.Helper()
	start := time.Now()
	h.ProvisioningID = must(t, "register")(p.Register(ctx, *h)).ProvisioningID
	t.Logf("register (enroll, manage: Ironic reads power from the simulator): %s", time.Since(start).Round(time.Millisecond))
	n := wantState(t, url, h.ProvisioningID, "manageable")
	if n.Driver != "ipmi" || n.DriverInfo["ipmi_cipher_suite"] != "3" || n.PowerState != "power off" {
		t.Fatalf("node driver %q, cipher suite %v, power %q; want ipmi, 3 and the simulator's power off",
			n.Driver, n.DriverInfo["ipmi_cipher_suite"], n.PowerState)
	}
}
