package ironic_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/agent/provisioner/direct"
	"github.com/rackfence/rackfence/agent/provisioner/ironic"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// Inspection parity: the direct provisioner's inspection and Ironic's
// (redfish inspect interface) of the same simulated BMC agree on what
// Ironic records: logical CPUs, architecture, memory, the root disk size
// by Ironic's rule (local_gb) and the NIC MACs (Ironic's ports). Each
// differing field is named; the differences known in Ironic 21.4 / sushy
// 4.3.3 are listed with their reason and must stay exactly those (a
// change either way is reported). TestRedfishHardwareTypeEndToEnd checks
// it on the profiles it deploys; TestInspectionParity on the shapes that
// table has not (no PowerState, a blade without a virtual CD).

// knownParity are the fields where Ironic records something else than the
// direct path, per profile, with the reason.
var knownParity = map[string]map[string]string{
	"tower": {
		"local_gb": "sushy 4.3.3 needs a Drive's Id: the drives linked into the chassis without one are not found",
		"macs":     "Ironic makes a port of every EthernetInterface with a MAC, the host interface to the BMC too",
	},
}

// checkParity compares the direct path's details with Ironic's node
// properties and ports; it returns the differences, by field.
func checkParity(t *testing.T, profile string, d *wire.HardwareDetails, props map[string]any, ironicNICs []wire.NIC) map[string]string {
	t.Helper()
	want := ironicProps(*d)
	want["macs"] = macs(d.NICs)
	diff := map[string]string{}
	for k, w := range want {
		got := fmt.Sprint(props[k])
		if k == "macs" {
			got = macs(ironicNICs)
		}
		if got != w {
			diff[k] = fmt.Sprintf("direct %s, ironic %s", w, got)
		}
	}
	for k, v := range diff {
		if knownParity[profile][k] == "" {
			t.Errorf("inspection parity: %s differs: %s", k, v)
		} else {
			t.Logf("inspection parity: %s differs as known (%s): %s", k, knownParity[profile][k], v)
		}
	}
	for k, why := range knownParity[profile] {
		if diff[k] == "" {
			t.Errorf("inspection parity: %s was known to differ (%s) and is now the same: drop it from knownParity", k, why)
		}
	}
	return diff
}

// directDetails inspects h through the direct provisioner.
func directDetails(t *testing.T, h provisioner.Host) *wire.HardwareDetails {
	t.Helper()
	holder := fence.NewHolder(nil)
	holder.Set(fence.Lease{Rack: "r1", Holder: "t", Epoch: 1, TTL: time.Hour, Deadline: time.Now().Add(time.Hour)})
	dp, err := direct.New(direct.Config{Guard: guard.NewGuard(holder, nil), BMC: bmc.Options{Timeout: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer dp.Close(context.Background())
	r, err := dp.Inspect(ctxT(t), h)
	if err != nil || r.HardwareDetails == nil {
		t.Fatalf("direct inspect: %+v, %v", r, err)
	}
	return r.HardwareDetails
}

// go test -count=1 -v -run TestInspectionParity ./agent/provisioner/ironic/
func TestInspectionParity(t *testing.T) {
	url := needIronic(t)
	requireSushy(t)
	for _, c := range []struct {
		profile string
		system  int
	}{{"no-powerstate", 0}, {"blade", 1}} {
		t.Run(fmt.Sprintf("%s/%d", c.profile, c.system), func(t *testing.T) {
			seq := hostSeq.Add(1)
			sim, err := bmcsim.Start(bmcsim.Config{Hosts: 1, PowerOn: true, Profile: c.profile,
				MACPrefix: fmt.Sprintf("52:58:%02x:%02x", os.Getpid()&0xff, seq&0xff)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { sim.Close() })
			ctx := ctxT(t)
			h := provisioner.Host{Name: uniqName("par-" + c.profile), BMC: wire.BMC{Address: sim.SystemAddresses(0)[c.system]},
				Username: "admin", Password: "password", BootMACAddress: sim.SystemMAC(0, c.system)}
			d := directDetails(t, h)
			ip := newProv(t, url, func(c *ironic.Config) {
				c.WaitTimeout = 3 * time.Minute
				c.Inventory = func(context.Context, provisioner.Host) (*wire.HardwareDetails, error) {
					return nil, fmt.Errorf("the BMC inventory must not be read: Ironic inspects")
				}
			})
			r, err := ip.Register(ctx, h)
			if r.ProvisioningID != "" {
				h.ProvisioningID = r.ProvisioningID
				t.Cleanup(func() { forceDelete(t, url, h.ProvisioningID) })
			}
			if err != nil || r.InProgress {
				t.Fatalf("Ironic manage: %+v, %v", r, err)
			}
			ir, err := ip.Inspect(ctx, h)
			if err != nil || ir.InProgress {
				t.Fatalf("Ironic inspect: %+v, %v", ir, err)
			}
			n := wantState(t, url, h.ProvisioningID, "manageable")
			checkParity(t, c.profile, d, n.Properties, ir.HardwareDetails.NICs)
		})
	}
}

// macs are a host's NIC MACs, lower case, sorted, comma-separated.
func macs(nics []wire.NIC) string {
	var out []string
	for _, n := range nics {
		if n.MAC != "" {
			out = append(out, strings.ToLower(n.MAC))
		}
	}
	slices.Sort(out)
	return strings.Join(slices.Compact(out), ",")
}
