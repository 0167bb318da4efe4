package bmc

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/bmcsim"
)

// The parallel reader and bmclib's own Inventory must agree on what they
// read from the same BMC (bmclib's walk is the reference), with and without
// a system path in the address.
func TestInventoryReadersAgree(t *testing.T) {
	sim := startSim(t, bmcsim.Config{Hosts: 3})
	ctx := testCtx(t)
	read := func(addr string, bmclibOnly bool) map[string]any {
		t.Helper()
		c, err := Dial(ctx, Target{Address: addr, Username: "admin", Password: "password"},
			Options{Timeout: 30 * time.Second, BMCLibInventory: bmclibOnly})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		hd, err := c.Inventory(ctx)
		if err != nil {
			t.Fatalf("inventory (bmclib only %v) of %s: %v", bmclibOnly, addr, err)
		}
		return map[string]any{"m": hd.Manufacturer, "model": hd.Model, "sn": hd.SerialNumber, "bios": hd.BIOSVersion,
			"cpus": hd.CPUs, "mem": hd.MemoryMiB, "nics": hd.NICs, "disks": hd.Disks}
	}
	ref := read(sim.Address(2), true)
	fast := read(sim.Address(2), false)
	noPath := read(strings.TrimSuffix(sim.Address(2), "/redfish/v1/Systems/1"), false)
	if !reflect.DeepEqual(ref, fast) {
		t.Fatalf("parallel inventory differs from bmclib's:\nbmclib:   %+v\nparallel: %+v", ref, fast)
	}
	if !reflect.DeepEqual(ref, noPath) {
		t.Fatalf("parallel inventory without a system path differs:\nbmclib:   %+v\nparallel: %+v", ref, noPath)
	}
	if nics := ref["nics"]; !strings.Contains(fmt.Sprint(nics), sim.MAC(2)) {
		t.Fatalf("NICs %v lack the host's MAC %s", nics, sim.MAC(2))
	}
}
