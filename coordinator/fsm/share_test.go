package fsm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"
	"unsafe"

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
		hh := st.Health
		switch i % 8 {
		case 0:
			st.Health = nil
		case 1:
			hh.Health, hh.Components = wire.HardwareWarning, map[string]string{wire.HealthSystem: wire.HardwareOK, wire.HealthFan: wire.HardwareWarning}
			hh.Problems = []string{"Fan Fan1: Warning"}
		case 2:
			hh.Since = hh.Since.In(time.FixedZone("X", 3600)) // the same instant elsewhere
		case 3:
			hh.Components = map[string]string{}
		case 4:
			hh.Components = nil
		case 5:
			hh.Since = hh.Since.Add(time.Nanosecond)
		case 6:
			hh.Problems = []string{}
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
	// h000100 and h000101 are healthy since different seconds: one
	// components map, two values; h000160 is healthy since the same
	// second as h000100: one value.
	d := f.s.Hosts["h000160"].Status
	if a.Health == nil || fmt.Sprintf("%p", a.Health.Components) != fmt.Sprintf("%p", b.Health.Components) {
		t.Error("equal health components are two copies")
	}
	if a.Health == b.Health || a.Health != d.Health {
		t.Errorf("health since different seconds shared (%v), since the same second not shared (%v)", a.Health == b.Health, a.Health != d.Health)
	}
	nic, boot := a.HardwareDetails.NICs[0].MAC, f.s.Hosts["h000100"].BootMACAddress
	if nic != boot || unsafe.StringData(nic) != unsafe.StringData(boot) {
		t.Errorf("the boot NIC's MAC %q is a second copy of bootMACAddress %q", nic, boot)
	}
}

// TestRestoreInternsSpec: a restored record's status and events are
// interned and shared as Apply's are, and so are the strings of its spec
// that repeat across hosts (its rack, its credentials' name).
func TestRestoreInternsSpec(t *testing.T) {
	var snap bytes.Buffer
	if err := fleetFSM(t, 300, 100).snapshot().Encode(&snap); err != nil {
		t.Fatal(err)
	}
	f := NewFSM()
	if err := f.Restore(&snap); err != nil {
		t.Fatal(err)
	}
	a, b := f.s.Hosts["h000100"], f.s.Hosts["h000101"]
	if unsafe.StringData(a.Rack) != unsafe.StringData(b.Rack) || unsafe.StringData(a.BMCCredentials) != unsafe.StringData(b.BMCCredentials) {
		t.Error("the rack or credentials name of restored hosts are copies per host")
	}
	if a.Status.BMCDetails != b.Status.BMCDetails || fmt.Sprintf("%p", a.Status.Health.Components) != fmt.Sprintf("%p", b.Status.Health.Components) {
		t.Error("restored hosts' equal BMC details or health components are copies per host")
	}
}

// TestInternSurvivesCollection: a string interned after a collection is
// the same copy as one interned before it, while a record holds it. (With
// unique.Make(s).Value() the collection dropped the entry: the string
// does not hold it.)
func TestInternSurvivesCollection(t *testing.T) {
	a := in(string([]byte("rack-survives-gc")))
	runtime.GC()
	runtime.GC()
	b := in(string([]byte("rack-survives-gc")))
	if a != b || unsafe.StringData(a) != unsafe.StringData(b) {
		t.Error("a string interned after a collection is a new copy")
	}
}
