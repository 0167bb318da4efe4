package fsm

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"reflect"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// The metal3 spec fields are spec: each change moves specIndex, the stored
// record shares nothing with the command, and a snapshot chunk (gob) and a
// log entry (JSON) carry them.
func TestSpecFieldsAreSpec(t *testing.T) {
	h := newFSMT(t)
	a := host("h1", "r1")
	a.Image = &wire.Image{URL: "http://i/x.iso"}
	h.ok(PutHostCmd{Host: a, Time: t0})
	yes := true
	for _, change := range []func(){
		func() { a.Image = &wire.Image{URL: "http://i/x.iso", Format: wire.FormatLiveISO} },
		func() {
			a.Image = &wire.Image{URL: "http://i/x.iso", Format: wire.FormatLiveISO, ChecksumType: "sha256"}
		},
		func() { a.BootMode = wire.BootModeLegacy },
		func() { a.BootMethod = wire.BootMethodUEFIHTTP },
		func() { a.AutomatedCleaningMode = wire.CleaningDisabled },
		func() { a.RootDeviceHints = &wire.RootDeviceHints{DeviceName: "/dev/sda"} },
		func() { a.RootDeviceHints = &wire.RootDeviceHints{DeviceName: "/dev/sda", Rotational: &yes} },
		func() { a.UserData = &wire.SecretReference{Name: "ud"} },
		func() { a.NetworkData = &wire.SecretReference{Name: "nd"} },
		func() { a.MetaData = &wire.SecretReference{Name: "md"} },
		func() { a.PreprovisioningNetworkData = &wire.SecretReference{Name: "pnd"} },
		func() { a.UserData = &wire.SecretReference{Name: "ud2"} },
		func() { a.BIOS = &wire.BIOSSpec{SRIOVEnabled: &yes} },
		func() {
			a.BIOS = &wire.BIOSSpec{SRIOVEnabled: &yes, Settings: map[string]string{"ProcTurboMode": "Enabled"}}
		},
		func() { a.Firmware = []wire.FirmwareComponent{{Component: "bmc", URL: "http://fw/b.bin"}} },
		func() {
			a.Firmware = []wire.FirmwareComponent{{Component: "bmc", URL: "http://fw/b.bin", Version: "2"}}
		},
		func() { a.RAID = &wire.RAIDSpec{HardwareRAIDVolumes: []wire.HardwareRAIDVolume{{Level: "1"}}} },
		func() {
			a.RAID = &wire.RAIDSpec{HardwareRAIDVolumes: []wire.HardwareRAIDVolume{{Level: "1"}}, KeepExisting: true}
		},
		func() { a.UpdatePolicy = &wire.UpdatePolicy{FirmwareUpdates: wire.UpdatePolicyOnReboot} },
	} {
		change()
		r := h.ok(PutHostCmd{Host: a, Time: t0}).(PutHostResult)
		if r.Host.SpecIndex != h.index {
			t.Fatalf("spec change kept specIndex %d (index %d): %+v", r.Host.SpecIndex, h.index, r.Host)
		}
	}
	// The same spec again is no change.
	before, _ := h.f.Host("h1")
	r := h.ok(PutHostCmd{Host: a, Time: t0}).(PutHostResult)
	if r.Host.ModifiedIndex != before.ModifiedIndex {
		t.Fatalf("an unchanged spec made a new record")
	}
	// The stored hints are the FSM's own.
	*a.RootDeviceHints.Rotational = false
	a.RootDeviceHints.DeviceName = "/dev/sdz"
	got, _ := h.f.Host("h1")
	if got.RootDeviceHints.DeviceName != "/dev/sda" || !*got.RootDeviceHints.Rotational {
		t.Fatalf("stored hints share the caller's: %+v", got.RootDeviceHints)
	}
	a.UserData.Name = "changed"
	if got, _ := h.f.Host("h1"); got.UserData.Name != "ud2" {
		t.Fatalf("stored userData shares the caller's: %+v", got.UserData)
	}

	// A snapshot chunk carries them.
	var chunk bytes.Buffer
	if err := gob.NewEncoder(&chunk).Encode(&hostFull{Host: got}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	buf.Write(binary.AppendUvarint(nil, uint64(chunk.Len())))
	buf.Write(chunk.Bytes())
	hosts, err := readChunks(bufio.NewReader(&buf), 1)
	if err != nil || len(hosts) != 1 {
		t.Fatal(err, len(hosts))
	}
	if back := hosts[0].host(); !reflect.DeepEqual(specOf(&back), specOf(&got)) {
		t.Fatalf("snapshot round trip: %+v\nwant %+v", specOf(&back), specOf(&got))
	}
	// So does a log entry.
	b, err := Encode(PutHostCmd{Host: got, Time: t0})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if back := c.(PutHostCmd).Host; !reflect.DeepEqual(specOf(&back), specOf(&got)) {
		t.Fatalf("log entry round trip: %+v", specOf(&back))
	}
}
