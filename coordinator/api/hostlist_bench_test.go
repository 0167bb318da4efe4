package api

import (
	"fmt"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// benchFleet is an FSM holding n available hosts in racks of 100, each
// with a status shaped as a fleet agent reports it (BMC and hardware
// details, operation history, one Extra key).
func benchFleet(tb testing.TB, n int) *fsm.FSM {
	f := fsm.NewFSM()
	idx := uint64(0)
	apply := func(c fsm.Command) any {
		data, err := fsm.Encode(c)
		if err != nil {
			tb.Fatal(err)
		}
		idx++
		r := f.Apply(idx, data).(fsm.Result)
		if r.Err != nil {
			tb.Fatal(r.Err)
		}
		return r.Value
	}
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	epochs := map[string]uint64{}
	for i := range n {
		rack := fmt.Sprintf("r%03d", i/100)
		apply(fsm.PutHostCmd{Host: wire.Host{Name: fmt.Sprintf("h%06d", i), Rack: rack, Online: true,
			BMC:            wire.BMC{Address: fmt.Sprintf("redfish+http://127.0.1.1:%d/redfish/v1/Systems/1", 20000+i), Credentials: "bmc"},
			BootMACAddress: fmt.Sprintf("52:54:01:%02x:%02x:%02x", (i>>16)&0xff, (i>>8)&0xff, i&0xff)}, Time: at})
		if epochs[rack] == 0 {
			epochs[rack] = apply(fsm.LeaseAcquireCmd{Rack: rack, Holder: "agent-" + rack, TTL: time.Minute, Time: at}).(wire.Lease).Epoch
		}
	}
	for first := 0; first < n; first += 100 {
		rack := fmt.Sprintf("r%03d", first/100)
		c := fsm.RackStatusCmd{Rack: rack, Epoch: epochs[rack], Time: at}
		for i := first; i < min(first+100, n); i++ {
			c.Hosts = append(c.Hosts, wire.RackHostReport{Name: fmt.Sprintf("h%06d", i), Status: benchStatus(i, at)})
		}
		apply(c)
	}
	return f
}

func benchStatus(i int, at time.Time) *wire.HostStatus {
	return &wire.HostStatus{ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpOK, PoweredOn: true, PowerState: "PowerOn",
		BMCDetails: &wire.BMCDetails{Protocol: "redfish", RedfishVersion: "1.11.0", Vendor: "Rackfence", Model: "SimBMC",
			FirmwareVersion: "2.0.0", Auth: "session", System: "/redfish/v1/Systems/1", Manager: "/redfish/v1/Managers/1",
			VirtualMedia: "/redfish/v1/Managers/1/VirtualMedia/CD1", VirtualMediaMethod: "actions", BootModes: []string{"UEFI", "Legacy"}},
		OperationHistory: &wire.OperationHistory{Register: wire.OperationMetric{Start: at, End: at.Add(time.Second)},
			Inspect: wire.OperationMetric{Start: at.Add(time.Second), End: at.Add(2 * time.Second)}},
		Extra: map[string]string{"node": "ready"},
		HardwareDetails: &wire.HardwareDetails{Manufacturer: "Rackfence", Model: "SimServer 1000", SerialNumber: fmt.Sprintf("SIM%06d", i), BIOSVersion: "1.2.3",
			CPUs:      []wire.CPU{{Model: "Sim Xeon 16C", Cores: 16, Threads: 32}, {Model: "Sim Xeon 16C", Cores: 16, Threads: 32}},
			MemoryMiB: 65536,
			NICs:      []wire.NIC{{Name: "NIC1", MAC: fmt.Sprintf("52:54:01:%02x:%02x:%02x", (i>>16)&0xff, (i>>8)&0xff, i&0xff), SpeedMbps: 10000}},
			Disks:     []wire.Disk{{Name: "Disk1", Model: "Sim SSD 480", SizeBytes: 480103981056, Type: "SSD"}},
			Firmware:  []wire.Firmware{{Name: "BIOS", Version: "1.2.3"}, {Name: "BMC", Version: "2.0.0"}}}}
}

// BenchmarkHostListPages lists 10,000 fleet-shaped hosts in pages of 500
// through writeHostPage (what GET /v1/hosts?limit=500 writes, the view
// taken once per list as the first page does), summaries and whole
// hosts: time, bytes and allocations per full list, and bytes allocated
// per listed host.
//
//	go test -run '^$' -bench HostListPages -benchmem ./coordinator/api/
func BenchmarkHostListPages(b *testing.B) {
	const n, limit = 10000, 500
	f := benchFleet(b, n)
	for _, summary := range []bool{true, false} {
		name := "whole"
		if summary {
			name = "summary"
		}
		b.Run(name, func(b *testing.B) {
			q := &hostQuery{summary: summary, page: pageReq{Limit: limit}}
			var wrote int
			b.ReportAllocs()
			for range b.N {
				v := f.HostsView("")
				wrote = 0
				for start := 0; ; {
					w := &writeMeter{h: http.Header{}}
					more := writeHostPage(w, v, start, q)
					wrote += w.total
					if !more {
						break
					}
					start += limit
				}
			}
			b.ReportMetric(float64(wrote), "B/list")
		})
	}
}

// TestListPagesReuseBuffer: the pages of a list are written through kept
// buffers, so a page allocates what its hosts' encoding takes, not a new
// 32 KiB write buffer each time.
func TestListPagesReuseBuffer(t *testing.T) {
	const n, limit = 200, 10
	v := benchFleet(t, n).HostsView("")
	q := &hostQuery{summary: true, page: pageReq{Limit: limit}}
	page := func() {
		for start := 0; ; start += limit {
			if !writeHostPage(&writeMeter{h: http.Header{}}, v, start, q) {
				return
			}
		}
	}
	page() // the first list may make the buffers
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	page()
	runtime.ReadMemStats(&ms1)
	perPage := float64(ms1.TotalAlloc-ms0.TotalAlloc) / (n / limit)
	t.Logf("allocated per page of %d summaries: %.0f B", limit, perPage)
	if perPage >= listWriteBuffer/2 {
		t.Errorf("a page of %d summaries allocated %.0f B: a new write buffer (%d B) per page", limit, perPage, listWriteBuffer)
	}
}
