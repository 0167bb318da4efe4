package bmc

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// The parallel reader against the simulator, with and without a system path
// in the address, gives the simulator's hardware. (The simulator is the
// reference: bmclib is not on the Redfish path, so its own inventory walk
// is no reference for what the layer reads.)
func TestInventoryWithAndWithoutSystemPath(t *testing.T) {
	sim := startSim(t, bmcsim.Config{Hosts: 3})
	ctx := testCtx(t)
	read := func(addr string) *wire.HardwareDetails {
		t.Helper()
		c, err := Dial(ctx, Target{Address: addr, Username: "admin", Password: "password"}, Options{Timeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		hd, err := c.Inventory(ctx)
		if err != nil {
			t.Fatalf("inventory of %s: %v", addr, err)
		}
		return hd
	}
	want := &wire.HardwareDetails{Manufacturer: "Rackfence", Model: "SimServer 1000", SerialNumber: "SIM000002", BIOSVersion: "1.2.3",
		SystemUUID: fmt.Sprintf("00000000-0000-4000-8000-%012x", 2),
		CPUs:       []wire.CPU{{Model: "Sim Xeon 16C", Cores: 16, Threads: 32}, {Model: "Sim Xeon 16C", Cores: 16, Threads: 32}},
		MemoryMiB:  65536,
		NICs:       []wire.NIC{{Name: "NIC1", MAC: sim.MAC(2), SpeedMbps: 10000}},
		Disks:      []wire.Disk{{Name: "Disk1", Model: "Sim SSD 480", SizeBytes: 480103981056, Type: "SSD"}},
		Firmware:   []wire.Firmware{{Name: "BIOS", Version: "1.2.3"}, {Name: "BMC", Version: "2.0.0"}}}
	withPath := read(sim.Address(2))
	noPath := read(strings.TrimSuffix(sim.Address(2), "/redfish/v1/Systems/1"))
	if !reflect.DeepEqual(withPath, want) {
		t.Fatalf("inventory\n got %+v\nwant %+v", withPath, want)
	}
	if !reflect.DeepEqual(noPath, want) {
		t.Fatalf("inventory without a system path\n got %+v\nwant %+v", noPath, want)
	}
}
