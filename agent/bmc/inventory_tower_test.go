package bmc

import (
	"reflect"
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// Inventory against the simulator's tower profile (published tower shapes):
// each subtest is one way a reader misses hardware the BMC lists (the
// profile advertises $expand as default does, so members come inline).
func TestInventoryTowerShape(t *testing.T) {
	sim := startSim(t, bmcsim.Config{Hosts: 1, Profile: "tower"})
	want := sim.ExpectedHardware(0, 0)
	c, err := Dial(testCtx(t), Target{Address: sim.Address(0), Username: "admin", Password: "password"}, Options{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(testCtx(t))
	got, err := c.Inventory(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("drives linked into the chassis, without Id", func(t *testing.T) {
		if !reflect.DeepEqual(got.Disks, want.Disks) {
			t.Errorf("disks %+v\nwant %+v", got.Disks, want.Disks)
		}
	})
	t.Run("physical port with a VLAN counted, host interface to the BMC not", func(t *testing.T) {
		if !reflect.DeepEqual(got.NICs, want.NICs) {
			t.Errorf("NICs %+v\nwant %+v", got.NICs, want.NICs)
		}
	})
	t.Run("CPU without TotalCores counted", func(t *testing.T) {
		if !reflect.DeepEqual(got.CPUs, want.CPUs) {
			t.Errorf("CPUs %+v\nwant %+v", got.CPUs, want.CPUs)
		}
	})
	t.Run("MemorySummary over a collection listing only a CXL region", func(t *testing.T) {
		if got.MemoryMiB != want.MemoryMiB {
			t.Errorf("memory %d MiB, want %d (MemorySummary)", got.MemoryMiB, want.MemoryMiB)
		}
	})
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("inventory\n got %+v\nwant %+v", *got, want)
	}
}
