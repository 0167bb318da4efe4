package agent

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/coordtest"
)

// BenchmarkWatchAnswer measures one rack watch answer of 200 changed hosts
// with an inventory of the usual size, with statuses and without
// (status=false): the coordinator's encoding and the agent's decoding, both
// in this process, through the real client.
//
//	go test -run '^$' -bench WatchAnswer -benchmem ./agent/
func BenchmarkWatchAnswer(b *testing.B) {
	const hosts = 200
	c := coordtest.Start(b, coordtest.Options{})
	ctx := context.Background()
	for i := 0; i < hosts; i++ {
		c.Apply(fakeHost(fmt.Sprintf("h%03d", i), "r1", i%250))
	}
	ac := c.AgentClient("r1")
	l, err := ac.AcquireLease(ctx, "r1", wire.LeaseRequest{Holder: "bench", TTL: wire.Duration(time.Minute)})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < hosts; i++ {
		if err := ac.ReportStatus(ctx, fmt.Sprintf("h%03d", i), wire.StatusReport{Epoch: l.Epoch, Status: benchStatus(i)}); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name  string
		watch func(context.Context, string, uint64, time.Duration) (*wire.WatchResponse, error)
	}{{"status", ac.Watch}, {"status=false", ac.WatchWithoutStatus}} {
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				r, err := bc.watch(ctx, "r1", 1, time.Second)
				if err != nil || len(r.Hosts) != hosts {
					b.Fatalf("%v: %d hosts", err, len(r.Hosts))
				}
			}
		})
	}
}

// benchStatus is an available host's status as the agent writes it after
// inspection: inventory, BMC details, operation history.
func benchStatus(i int) wire.HostStatus {
	t := time.Unix(1_700_000_000, 0).UTC()
	return wire.HostStatus{ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpOK, PoweredOn: true,
		HardwareDetails: &wire.HardwareDetails{Manufacturer: "Contoso", Model: "R650", SerialNumber: fmt.Sprintf("SN%07d", i),
			BIOSVersion: "2.19.1", MemoryMiB: 524288,
			CPUs:     []wire.CPU{{Model: "Xeon Gold 6338", Cores: 32, Threads: 64}, {Model: "Xeon Gold 6338", Cores: 32, Threads: 64}},
			NICs:     []wire.NIC{{Name: "eno1", MAC: fmt.Sprintf("52:54:01:00:%02x:%02x", i>>8&255, i&255), SpeedMbps: 25000}, {Name: "eno2", MAC: fmt.Sprintf("52:54:02:00:%02x:%02x", i>>8&255, i&255), SpeedMbps: 25000}},
			Disks:    []wire.Disk{{Name: "sda", Model: "PM1733", SizeBytes: 3840755982336, Type: "NVMe"}, {Name: "sdb", Model: "PM1733", SizeBytes: 3840755982336, Type: "NVMe"}},
			Firmware: []wire.Firmware{{Name: "BMC", Version: "7.00.00"}, {Name: "BIOS", Version: "2.19.1"}}},
		BMCDetails: &wire.BMCDetails{Protocol: "redfish", RedfishVersion: "1.11.0", Vendor: "Contoso", Model: "iBMC", FirmwareVersion: "7.00.00",
			Auth: "session", System: "/redfish/v1/Systems/1", Manager: "/redfish/v1/Managers/1"},
		OperationHistory: &wire.OperationHistory{Register: wire.OperationMetric{Start: t, End: t.Add(time.Second)},
			Inspect: wire.OperationMetric{Start: t.Add(time.Second), End: t.Add(5 * time.Second)}}}
}
