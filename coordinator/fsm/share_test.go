package fsm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// variedFSM is fleetFSM's 300 hosts, then reports that make some parts
// differ by one field each (so two values wrongly given one key would
// show), empty and nil lists and maps, and events.
func variedFSM(t *testing.T) *FSM {
	f := fleetFSM(t, 300, 100)
	apply := applier(t, f)
	idx := f.applied.Load()
	apply = func(c Command) any {
		data, err := Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		idx++
		r := f.Apply(idx, data).(Result)
		if r.Err != nil {
			t.Fatal(r.Err)
		}
		return r.Value
	}
	ep := f.Lease("r000").Epoch
	c := RackStatusCmd{Rack: "r000", Epoch: ep, Time: t0.Add(time.Hour)}
	for i := 0; i < 40; i++ {
		rep := fleetStatus(i, 2, t0)
		st, hw, bmc := rep.Status, rep.Status.HardwareDetails, rep.Status.BMCDetails
		switch i % 20 {
		case 0:
			bmc.Problems = []string{"the system offers no boot mode"}
		case 1:
			hw.CPUs[1].Cores = 8
		case 2:
			hw.CPUs[0].Threads = 16
		case 3:
			hw.CPUs = hw.CPUs[:1]
		case 4:
			hw.Disks[0].SizeBytes++
		case 5:
			hw.Disks[0].Type = "HDD"
		case 6:
			hw.Firmware[1].Version = "2.0.1"
		case 7:
			hw.Firmware = []wire.Firmware{{Name: "BIOS1.2.3", Version: ""}, {Name: "BMC", Version: "2.0.0"}}
		case 8:
			hw.Accelerators = []wire.Accelerator{{Name: "GPU0", Type: "GPU", Model: "Sim A100"}}
		case 9:
			hw.Accelerators = []wire.Accelerator{{Name: "GPU0", Type: "GPU", Model: "Sim H100"}}
		case 10:
			bmc.Vendor = "Other"
		case 11:
			bmc.BootModes = nil
		case 12:
			bmc.BootModes = []string{}
		case 13:
			bmc.BootModes = []string{"UEFI:", "Legacy"}
		case 14:
			bmc.BootModes = []string{"UEFI", ":Legacy"}
		case 15:
			bmc.Problems = []string{"no virtual media device taking CD or DVD"}
		case 16:
			st.Extra = map[string]string{}
		case 17:
			st.Extra = map[string]string{"node": "ready", "retryAt": "2026-01-02T03:04:05Z"}
		case 18:
			st.Extra = map[string]string{"node": "readyx"}
		case 19:
			st.Extra = map[string]string{"node": "ready", "x": ""}
		}
		rep.Events = append(rep.Events, wire.Event{Reason: "Custom", Message: fmt.Sprintf("host %d", i), Source: "test"})
		c.Hosts = append(c.Hosts, rep)
	}
	apply(c)
	return f
}

// reads is everything a reader sees of f, as JSON: every host and its
// events, the list, every rack's watch from 0, the state hash. (Snapshot
// bytes follow map order; a restore of one is compared instead.)
func reads(t *testing.T, f *FSM) map[string][]byte {
	out := map[string][]byte{}
	put := func(k string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = b
	}
	hosts, _ := f.HostsSelected("", "", nil)
	put("list", hosts)
	for _, h := range hosts {
		one, _ := f.Host(h.Name)
		put("host "+h.Name, one)
		ev, _, _ := f.Events(h.Name)
		put("events "+h.Name, ev)
	}
	racks, _ := f.Racks()
	for _, r := range racks {
		w, _ := f.changes(r.Name, 0)
		put("watch "+r.Name, w)
	}
	out["hash"] = []byte(f.snapshot().sum())
	return out
}

// TestSharingChangesNoRead: a state built with shared parts reads, snapshots
// and hashes byte for byte as the same state built without, and so does
// its restore.
func TestSharingChangesNoRead(t *testing.T) {
	shareParts = false
	plain := reads(t, variedFSM(t))
	shareParts = true
	sharedF := variedFSM(t)
	got := reads(t, sharedF)
	var snap bytes.Buffer
	if err := sharedF.snapshot().Encode(&snap); err != nil {
		t.Fatal(err)
	}
	restored := NewFSM()
	if err := restored.Restore(&snap); err != nil {
		t.Fatal(err)
	}
	again := reads(t, restored)
	if len(got) != len(plain) {
		t.Fatalf("%d reads with sharing, %d without", len(got), len(plain))
	}
	for _, r := range []map[string][]byte{plain, got, again} {
		var ev []wire.Event
		if err := json.Unmarshal(r["events h000005"], &ev); err != nil || len(ev) != 5 || ev[4].Message != "host 5" || ev[3].Reason != "Inspected" {
			t.Fatalf("events of h000005: %s", r["events h000005"])
		}
	}
	for k, want := range plain {
		if !bytes.Equal(got[k], want) {
			t.Errorf("%s with sharing:\n%s\nwithout:\n%s", k, got[k], want)
		}
		if !bytes.Equal(again[k], want) {
			t.Errorf("%s after restore:\n%s\nwithout sharing:\n%s", k, again[k], want)
		}
	}
}

// TestEqualPartsAreShared: two hosts with equal BMC details, CPU, disk and
// firmware lists and Extra maps point at one copy of each; a host whose
// CPUs differ does not share them.
func TestEqualPartsAreShared(t *testing.T) {
	f := variedFSM(t)
	a, b, c := f.s.Hosts["h000100"].Status, f.s.Hosts["h000101"].Status, f.s.Hosts["h000001"].Status
	if a.BMCDetails != b.BMCDetails {
		t.Error("equal BMC details are two copies")
	}
	if &a.HardwareDetails.CPUs[0] != &b.HardwareDetails.CPUs[0] || &a.HardwareDetails.Disks[0] != &b.HardwareDetails.Disks[0] ||
		&a.HardwareDetails.Firmware[0] != &b.HardwareDetails.Firmware[0] {
		t.Error("equal CPU, disk or firmware lists are two copies")
	}
	if fmt.Sprintf("%p", a.Extra) != fmt.Sprintf("%p", b.Extra) {
		t.Error("equal Extra maps are two copies")
	}
	if &a.HardwareDetails.CPUs[0] == &c.HardwareDetails.CPUs[0] {
		t.Error("different CPU lists share one copy")
	}
	if &a.HardwareDetails.NICs[0] == &b.HardwareDetails.NICs[0] {
		t.Error("NIC lists (a MAC each) are shared")
	}
}
