package fsm

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// fleetStatus is host i's status at step (0 registering, 1 inspecting,
// 2 available) shaped as a fleet agent reports it against
// rackfence-bmcsim: BMC details from registration on, the hardware details
// and hardware health from inspection (health is read right after it, its
// Since the second of that read: a fleet's hosts finish inspecting over
// about a minute), the operation history and the node's Extra key, and
// one transition event per step.
func fleetStatus(i, step int, at time.Time) wire.RackHostReport {
	bmc := &wire.BMCDetails{Protocol: "redfish", RedfishVersion: "1.11.0", Vendor: "Rackfence", Model: "SimBMC",
		FirmwareVersion: "2.0.0", Auth: "session", System: "/redfish/v1/Systems/1", Manager: "/redfish/v1/Managers/1",
		VirtualMedia: "/redfish/v1/Managers/1/VirtualMedia/CD1", VirtualMediaMethod: "actions", BootModes: []string{"UEFI", "Legacy"}}
	st := &wire.HostStatus{ProvisioningState: wire.StateRegistering, OperationalStatus: wire.OpOK, PoweredOn: true, BMCDetails: bmc,
		OperationHistory: &wire.OperationHistory{Register: wire.OperationMetric{Start: at}}}
	ev := wire.Event{Time: at, Type: wire.EventNormal, Reason: "StartManaging", Message: "new → registering: BMC details given (even partial): register."}
	if step >= 1 {
		st.ProvisioningState = wire.StateInspecting
		st.OperationHistory.Register.End = at.Add(time.Second)
		st.OperationHistory.Inspect.Start = at.Add(time.Second)
		st.Extra = map[string]string{"node": "enrolled"}
		ev = wire.Event{Time: at.Add(time.Second), Type: wire.EventNormal, Reason: "Registered", Message: "registering → inspecting: Lifecycle: registering → inspecting."}
	}
	if step >= 2 {
		st.ProvisioningState = wire.StateAvailable
		st.OperationHistory.Inspect.End = at.Add(2 * time.Second)
		st.Extra = map[string]string{"node": "ready"}
		st.HardwareDetails = &wire.HardwareDetails{Manufacturer: "Rackfence", Model: "SimServer 1000", SerialNumber: fmt.Sprintf("SIM%06d", i), BIOSVersion: "1.2.3",
			CPUs:       []wire.CPU{{Model: "Sim Xeon 16C", Cores: 16, Threads: 32}, {Model: "Sim Xeon 16C", Cores: 16, Threads: 32}},
			MemoryMiB:  65536,
			NICs:       []wire.NIC{{Name: "NIC1", MAC: fmt.Sprintf("52:54:01:%02x:%02x:%02x", (i>>16)&0xff, (i>>8)&0xff, i&0xff), SpeedMbps: 10000}},
			Disks:      []wire.Disk{{Name: "Disk1", Model: "Sim SSD 480", SizeBytes: 480103981056, Type: "SSD"}},
			Firmware:   []wire.Firmware{{Name: "BIOS", Version: "1.2.3"}, {Name: "BMC", Version: "2.0.0"}},
			SystemUUID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i)}
		st.Health = &wire.HardwareHealth{Health: wire.HardwareOK, Since: at.Add(time.Duration(2+i%60) * time.Second).Truncate(time.Second),
			Components: map[string]string{wire.HealthSystem: wire.HardwareOK, wire.HealthChassis: wire.HardwareOK, wire.HealthTemperature: wire.HardwareOK,
				wire.HealthFan: wire.HardwareOK, wire.HealthPowerSupply: wire.HardwareOK, wire.HealthStorage: wire.HardwareOK}}
		ev = wire.Event{Time: at.Add(2 * time.Second), Type: wire.EventNormal, Reason: "Inspected", Message: "inspecting → available: Lifecycle: inspecting → available (provide follows)."}
	}
	return wire.RackHostReport{Name: fmt.Sprintf("h%06d", i), Status: st, Events: []wire.Event{ev}}
}

// fleetFSM applies, through encoded log entries as Raft would, what a fleet
// of n hosts in racks of perRack writes while registering: each host's
// PUT, each rack's lease, then each rack's three reports (registering,
// inspecting, available). The entries are dropped once applied, so the
// FSM's heap is what remains.
func fleetFSM(tb testing.TB, n, perRack int) *FSM { return packedFleetFSM(tb, n, perRack, nil) }

// packedFleetFSM is fleetFSM with every entry passed through pack.
func packedFleetFSM(tb testing.TB, n, perRack int, pack func([]byte) []byte) *FSM {
	f := NewFSM()
	apply := packedApplier(tb, f, pack)
	epochs := map[string]uint64{}
	for i := 0; i < n; i++ {
		rack := fmt.Sprintf("r%03d", i/perRack)
		apply(PutHostCmd{Host: wire.Host{Name: fmt.Sprintf("h%06d", i), Rack: rack, Online: true,
			BMC:            wire.BMC{Address: fmt.Sprintf("redfish+http://127.0.1.1:%d/redfish/v1/Systems/1", 20000+i), Credentials: "bmc"},
			BootMACAddress: fmt.Sprintf("52:54:01:%02x:%02x:%02x", (i>>16)&0xff, (i>>8)&0xff, i&0xff)}})
		if epochs[rack] == 0 {
			epochs[rack] = apply(LeaseAcquireCmd{Rack: rack, Holder: "agent-" + rack, TTL: time.Minute, Time: t0}).(wire.Lease).Epoch
		}
	}
	for step := 0; step < 3; step++ {
		for first := 0; first < n; first += perRack {
			rack := fmt.Sprintf("r%03d", first/perRack)
			c := RackStatusCmd{Rack: rack, Epoch: epochs[rack], Time: t0.Add(time.Duration(step) * time.Second)}
			for i := first; i < min(first+perRack, n); i++ {
				c.Hosts = append(c.Hosts, fleetStatus(i, step, t0))
			}
			apply(c)
		}
	}
	return f
}

// heapInUse is the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkHostHeap reports the FSM's live heap per host (heap-B/host)
// once 10,000 hosts shaped as the fleet's are available: every iteration
// builds a new FSM; the figure is the heap it holds after a GC.
//
//	go test -run '^$' -bench HostHeap -benchtime 3x ./coordinator/fsm/
func BenchmarkHostHeap(b *testing.B) {
	for _, c := range []struct {
		name string
		pack func([]byte) []byte
	}{{"plain", nil}, {"compressed", Compress}} {
		b.Run(c.name, func(b *testing.B) {
			const n = 10000
			var per float64
			for i := 0; i < b.N; i++ {
				before := heapInUse()
				f := packedFleetFSM(b, n, 100, c.pack)
				per = float64(heapInUse()-before) / n
				runtime.KeepAlive(f)
			}
			b.ReportMetric(per, "heap-B/host")
		})
	}
}
