package bmc

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/shared/wire"
)

// The Redfish layer against fakeRF shapes (fakeredfish_test.go): what the
// simulator's profiles do not cover on their own — auth fallbacks and
// re-login, a device ignoring a change, the exact bodies and headers sent.

func dialFake(t *testing.T, f *fakeRF, path, password string) (*Conn, error) {
	t.Helper()
	c, err := Dial(testCtx(t), Target{Address: f.addr(path), Username: "admin", Password: password}, Options{Timeout: 10 * time.Second, MutationTimeout: 10 * time.Second})
	if err == nil {
		t.Cleanup(func() { _ = c.Close(testCtx(t)) })
	}
	return c, err
}

func count(reqs []string, prefix string) int {
	n := 0
	for _, r := range reqs {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

// oneSystem is a service with Systems/1 managed by Managers/1.
func oneSystem(t *testing.T, sessions bool, sysExtra map[string]any) *fakeRF {
	f := newFakeRF(t, map[string]map[string]any{
		"/redfish/v1":          fakeRoot(sessions),
		"/redfish/v1/Systems":  coll("/redfish/v1/Systems/1"),
		"/redfish/v1/Managers": coll("/redfish/v1/Managers/1"),
		"/redfish/v1/Managers/1": {"@odata.id": "/redfish/v1/Managers/1", "Manufacturer": "FakeCo", "Model": "FakeBMC 9",
			"FirmwareVersion": "9.1", "EthernetInterfaces": odata("/redfish/v1/Managers/1/EthernetInterfaces")},
		"/redfish/v1/Managers/1/EthernetInterfaces":      coll("/redfish/v1/Managers/1/EthernetInterfaces/eth0"),
		"/redfish/v1/Managers/1/EthernetInterfaces/eth0": {"Id": "eth0", "MACAddress": "AA:AA:AA:AA:AA:AA"},
	})
	f.sessions = sessions
	fakeSystem(f, "/redfish/v1/Systems/1", "/redfish/v1/Managers/1", sysExtra)
	return f
}

func TestRedfishBasicWhenLoginRefusedAndRemembered(t *testing.T) {
	for _, status := range []int{401, 404, 405} {
		f := oneSystem(t, true, nil)
		f.login = status
		c, err := dialFake(t, f, "", "password")
		if err != nil {
			t.Fatalf("login answered %d: dial %v; want HTTP Basic", status, err)
		}
		on, err := c.PowerState(testCtx(t))
		if err != nil || on {
			t.Fatalf("power over basic: %v %v", on, err)
		}
		bd, err := c.Details(testCtx(t))
		if err != nil || bd.Auth != "basic" {
			t.Fatalf("details %+v %v; want auth basic", bd, err)
		}
		// A dropped session logs in again with Basic straight away.
		c.mu.Lock()
		c.dropSession()
		c.mu.Unlock()
		if _, err := c.PowerState(testCtx(t)); err != nil {
			t.Fatal(err)
		}
		reqs := f.requests()
		if n := count(reqs, "POST /redfish/v1/SessionService/Sessions"); n != 1 {
			t.Fatalf("login %d: %d session logins; want 1 (Basic remembered): %v", status, n, reqs)
		}
		if n := count(reqs, "GET /redfish/v1/Systems/1 basic"); n < 2 {
			t.Fatalf("login %d: requests %v; want the system read with Basic", status, reqs)
		}
	}
}

func TestRedfishBasicOnlyAndRefused(t *testing.T) {
	f := oneSystem(t, false, nil)
	c, err := dialFake(t, f, "/redfish/v1/Systems/1", "password")
	if err != nil {
		t.Fatal(err)
	}
	if bd, err := c.Details(testCtx(t)); err != nil || bd.Auth != "basic" || bd.Vendor != "Fake" || bd.Model != "FakeBMC 9" || bd.FirmwareVersion != "9.1" {
		t.Fatalf("details %+v %v", bd, err)
	}
	if n := count(f.requests(), "POST"); n != 0 {
		t.Fatalf("a service without sessions got %d POSTs", n)
	}
	_, err = dialFake(t, f, "", "wrong-pw-123")
	if !errors.Is(err, errclass.ErrAuth) || strings.Contains(err.Error(), "wrong-pw-123") {
		t.Fatalf("basic refused: %v; want errclass.ErrAuth without the password", err)
	}
}

func TestRedfishExpiredSessionLogsInAgainOnce(t *testing.T) {
	f := oneSystem(t, true, nil)
	c, err := dialFake(t, f, "", "password")
	if err != nil {
		t.Fatal(err)
	}
	g, _ := leasedGuard(time.Minute, nil)
	f.mu.Lock()
	f.tokens = map[string]bool{} // the BMC forgot every session
	f.mu.Unlock()
	if err := c.SetPower(testCtx(t), g, "h", true); err != nil {
		t.Fatalf("power on after the session expired: %v", err)
	}
	if f.doc("/redfish/v1/Systems/1")["PowerState"] != "On" {
		t.Fatal("not powered on")
	}
	reqs := f.requests()
	if n := count(reqs, "POST /redfish/v1/SessionService/Sessions"); n != 2 {
		t.Fatalf("%d logins; want 2 (one re-login): %v", n, reqs)
	}
	if n := count(reqs, "POST /redfish/v1/Systems/1/Actions/ComputerSystem.Reset"); n != 1 {
		t.Fatalf("%d resets; want exactly 1: %v", n, reqs)
	}
}

// blade: one BMC, four systems, each managed by its own manager with its
// own CD (actions).
func blade(t *testing.T) *fakeRF {
	docs := map[string]map[string]any{"/redfish/v1": fakeRoot(true)}
	var systems, managers []string
	f := newFakeRF(t, docs)
	f.sessions = true
	for _, id := range []string{"B1", "B2", "B3", "B4"} {
		sys, mgr := "/redfish/v1/Systems/"+id, "/redfish/v1/Managers/M"+id
		cd := mgr + "/VirtualMedia/CD"
		systems, managers = append(systems, sys), append(managers, mgr)
		fakeSystem(f, sys, mgr, nil)
		docs[mgr] = map[string]any{"@odata.id": mgr, "Model": "Blade CMC", "VirtualMedia": odata(mgr + "/VirtualMedia"),
			"Actions": map[string]any{"#Manager.Reset": map[string]any{"target": mgr + "/Actions/Manager.Reset"}}}
		docs[mgr+"/VirtualMedia"] = coll(cd)
		docs[cd] = map[string]any{"@odata.id": cd, "MediaTypes": []string{"CD", "DVD"}, "Image": nil, "Inserted": false,
			"Actions": map[string]any{
				"#VirtualMedia.InsertMedia": map[string]any{"target": cd + "/Actions/VirtualMedia.InsertMedia"},
				"#VirtualMedia.EjectMedia":  map[string]any{"target": cd + "/Actions/VirtualMedia.EjectMedia"}}}
		f.actions[cd+"/Actions/VirtualMedia.InsertMedia"] = func(f *fakeRF, b map[string]any) int {
			f.set(cd, map[string]any{"Image": b["Image"], "Inserted": true})
			return 204
		}
		f.actions[cd+"/Actions/VirtualMedia.EjectMedia"] = func(f *fakeRF, b map[string]any) int {
			f.set(cd, map[string]any{"Image": nil, "Inserted": false})
			return 204
		}
		f.actions[mgr+"/Actions/Manager.Reset"] = func(f *fakeRF, b map[string]any) int { return 204 }
	}
	docs["/redfish/v1/Systems"] = coll(systems...)
	docs["/redfish/v1/Managers"] = coll(managers...)
	return f
}

func TestRedfishBladeDrivesOnlyTheAddressedSystem(t *testing.T) {
	f := blade(t)
	c, err := dialFake(t, f, "", "password")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.PowerState(testCtx(t))
	if !errors.Is(err, errclass.ErrFailed) || !strings.Contains(err.Error(), "bmc.address") || !strings.Contains(err.Error(), "/redfish/v1/Systems/B3") {
		t.Fatalf("several systems and no path: %v; want errclass.ErrFailed asking for the system path in bmc.address", err)
	}
	c, err = dialFake(t, f, "/redfish/v1/Systems/B2", "password")
	if err != nil {
		t.Fatal(err)
	}
	g, _ := leasedGuard(time.Minute, nil)
	ctx := testCtx(t)
	if err := c.SetPower(ctx, g, "b2", true); err != nil {
		t.Fatal(err)
	}
	if err := c.InsertMedia(ctx, g, "b2", "http://i/b2.iso"); err != nil {
		t.Fatal(err)
	}
	if err := c.resetBMC(ctx, g, "b2"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"B1", "B2", "B3", "B4"} {
		power, media := f.doc("/redfish/v1/Systems/" + id)["PowerState"], f.doc("/redfish/v1/Managers/M"+id+"/VirtualMedia/CD")
		if want := id == "B2"; (power == "On") != want || (media["Inserted"] == true) != want {
			t.Errorf("system %s: power %v, media %v", id, power, media)
		}
	}
	for _, r := range f.requests() {
		if (strings.HasPrefix(r, "POST") || strings.HasPrefix(r, "PATCH")) && !strings.Contains(r, "B2") && !strings.Contains(r, "Sessions") {
			t.Errorf("a mutation reached another blade: %s", r)
		}
	}
}

// vmediaPatch: virtual media under the system, no actions, listing
// WriteProtected, TransferProtocolType and TransferMethod; a USB stick
// first, the CD second.
func vmediaPatch(t *testing.T) *fakeRF {
	f := oneSystem(t, true, map[string]any{"VirtualMedia": odata("/redfish/v1/Systems/1/VirtualMedia"),
		"Boot": map[string]any{"BootSourceOverrideTarget": "None", "BootSourceOverrideEnabled": "Disabled",
			"BootSourceOverrideMode": "Legacy", "BootSourceOverrideMode@Redfish.AllowableValues": []string{"Legacy", "UEFI"}}})
	f.docs["/redfish/v1/Systems/1/VirtualMedia"] = coll("/redfish/v1/Systems/1/VirtualMedia/USB1", "/redfish/v1/Systems/1/VirtualMedia/CD1")
	f.docs["/redfish/v1/Systems/1/VirtualMedia/USB1"] = map[string]any{"@odata.id": "/redfish/v1/Systems/1/VirtualMedia/USB1", "MediaTypes": []string{"USBStick"}}
	f.docs["/redfish/v1/Systems/1/VirtualMedia/CD1"] = map[string]any{"@odata.id": "/redfish/v1/Systems/1/VirtualMedia/CD1",
		"MediaTypes": []string{"CD", "DVD"}, "Image": nil, "Inserted": false, "WriteProtected": false,
		"TransferProtocolType": nil, "TransferMethod": nil}
	return f
}

func TestRedfishVirtualMediaByPatchWithReadBack(t *testing.T) {
	f := vmediaPatch(t)
	c, err := dialFake(t, f, "", "password")
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	g, _ := leasedGuard(time.Minute, nil)
	bd, err := c.Details(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := &wire.BMCDetails{Protocol: "redfish", RedfishVersion: "1.15.0", Vendor: "Fake", Model: "FakeBMC 9", FirmwareVersion: "9.1",
		Auth: "session", System: "/redfish/v1/Systems/1", Manager: "/redfish/v1/Managers/1",
		VirtualMedia: "/redfish/v1/Systems/1/VirtualMedia/CD1", VirtualMediaMethod: "patch", BootModes: []string{"Legacy", "UEFI"}}
	if !reflect.DeepEqual(bd, want) {
		t.Fatalf("details\n got %+v\nwant %+v", bd, want)
	}
	cd := "/redfish/v1/Systems/1/VirtualMedia/CD1"
	if err := c.InsertMedia(ctx, g, "h", "https://i/a.iso"); err != nil {
		t.Fatal(err)
	}
	if err := c.InsertMedia(ctx, g, "h", "http://i/b.iso"); err != nil {
		t.Fatal(err)
	}
	if err := c.EjectMedia(ctx, g, "h"); err != nil {
		t.Fatal(err)
	}
	if d := f.doc(cd); d["Inserted"] != false {
		t.Fatalf("after eject: %v", d)
	}
	var got []string
	for _, p := range f.patches {
		if p.Path != cd {
			continue
		}
		if p.IfMatch == "" {
			t.Errorf("PATCH without If-Match: %+v", p)
		}
		got = append(got, strings.TrimPrefix(strings.ReplaceAll(jsonString(p.Body), `"`, ""), ""))
	}
	wantPatches := []string{
		"{Image:https://i/a.iso,Inserted:true,TransferMethod:Stream,TransferProtocolType:HTTPS,WriteProtected:true}",
		"{Image:null,Inserted:false}",
		"{Image:http://i/b.iso,Inserted:true,TransferMethod:Stream,TransferProtocolType:HTTP,WriteProtected:true}",
		"{Image:null,Inserted:false}",
	}
	if strings.Join(got, "\n") != strings.Join(wantPatches, "\n") {
		t.Fatalf("PATCHes of the CD:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantPatches, "\n"))
	}

	// Boot: the system offers UEFI among its modes: sent.
	if err := c.SetBootDevice(ctx, g, "h", "cdrom", false); err != nil {
		t.Fatal(err)
	}
	last := f.patches[len(f.patches)-1]
	if s := jsonString(last.Body); s != `{"Boot":{"BootSourceOverrideEnabled":"Once","BootSourceOverrideMode":"UEFI","BootSourceOverrideTarget":"Cd"}}` || last.IfMatch == "" {
		t.Fatalf("boot PATCH %s (If-Match %q)", s, last.IfMatch)
	}

	// A device that answers 204 and changes nothing: the read-back fails.
	f.actions["PATCH "+cd] = func(*fakeRF, map[string]any) int { return 204 }
	err = c.InsertMedia(ctx, g, "h", "http://i/c.iso")
	if !errors.Is(err, errclass.ErrFailed) || !strings.Contains(err.Error(), "reads back") {
		t.Fatalf("insert that did not take: %v; want errclass.ErrFailed saying what was read back", err)
	}
}

func TestRedfishBootModeOnlyWhenOffered(t *testing.T) {
	for _, tc := range []struct {
		boot map[string]any
		want string
	}{
		{map[string]any{"BootSourceOverrideTarget": "None"}, `{"Boot":{"BootSourceOverrideEnabled":"Continuous","BootSourceOverrideTarget":"Pxe"}}`},
		{map[string]any{"BootSourceOverrideMode": "UEFI"}, `{"Boot":{"BootSourceOverrideEnabled":"Continuous","BootSourceOverrideMode":"UEFI","BootSourceOverrideTarget":"Pxe"}}`},
		{map[string]any{"BootSourceOverrideMode": "Legacy", "BootSourceOverrideMode@Redfish.AllowableValues": []string{"Legacy"}},
			`{"Boot":{"BootSourceOverrideEnabled":"Continuous","BootSourceOverrideTarget":"Pxe"}}`},
	} {
		f := oneSystem(t, true, map[string]any{"Boot": tc.boot})
		c, err := dialFake(t, f, "", "password")
		if err != nil {
			t.Fatal(err)
		}
		g, _ := leasedGuard(time.Minute, nil)
		if err := c.SetBootDevice(testCtx(t), g, "h", "pxe", true); err != nil {
			t.Fatal(err)
		}
		if got := jsonString(f.patches[len(f.patches)-1].Body); got != tc.want {
			t.Errorf("system Boot %v: sent %s; want %s", tc.boot, got, tc.want)
		}
	}
}

func TestRedfishInsertMediaActionSendsTransferProtocol(t *testing.T) {
	f := blade(t)
	cd := "/redfish/v1/Managers/MB1/VirtualMedia/CD"
	f.docs[cd]["TransferProtocolType"] = nil // OpenBMC: required, listed
	c, err := dialFake(t, f, "/redfish/v1/Systems/B1", "password")
	if err != nil {
		t.Fatal(err)
	}
	g, _ := leasedGuard(time.Minute, nil)
	if err := c.InsertMedia(testCtx(t), g, "h", "https://i/x.iso"); err != nil {
		t.Fatal(err)
	}
	var body string
	for _, p := range f.patches {
		if strings.HasSuffix(p.Path, "InsertMedia") {
			body = jsonString(p.Body)
		}
	}
	if body != `{"Image":"https://i/x.iso","Inserted":true,"TransferProtocolType":"HTTPS","WriteProtected":true}` {
		t.Fatalf("InsertMedia body %s", body)
	}
}

func TestRedfishNoVirtualMediaDevice(t *testing.T) {
	f := oneSystem(t, false, map[string]any{"VirtualMedia": odata("/redfish/v1/Systems/1/VirtualMedia")})
	f.docs["/redfish/v1/Systems/1/VirtualMedia"] = coll("/redfish/v1/Systems/1/VirtualMedia/F1")
	f.docs["/redfish/v1/Systems/1/VirtualMedia/F1"] = map[string]any{"MediaTypes": []string{"Floppy"}}
	f.docs["/redfish/v1/Managers/1"]["VirtualMedia"] = odata("/redfish/v1/Managers/1/VirtualMedia")
	f.docs["/redfish/v1/Managers/1/VirtualMedia"] = coll("/redfish/v1/Managers/1/VirtualMedia/U1")
	f.docs["/redfish/v1/Managers/1/VirtualMedia/U1"] = map[string]any{"MediaTypes": []string{"USBStick"}}
	c, err := dialFake(t, f, "", "password")
	if err != nil {
		t.Fatal(err)
	}
	g, _ := leasedGuard(time.Minute, nil)
	const msg = "no virtual media device taking CD or DVD under Systems/1 or Managers/1"
	err = c.InsertMedia(testCtx(t), g, "h", "http://i/x.iso")
	if !errors.Is(err, errclass.ErrUnsupported) || !strings.Contains(err.Error(), msg) {
		t.Fatalf("insert without a CD device: %v; want errclass.ErrUnsupported with %q", err, msg)
	}
	if err := c.EjectMedia(testCtx(t), g, "h"); err != nil {
		t.Fatalf("eject without a CD device: %v; want nothing to do", err)
	}
	bd, err := c.Details(testCtx(t))
	// No boot target list: PXE is what provisioning falls back to, so the
	// BMC lacks nothing to provision; a config drive would need the CD.
	if err != nil || bd.VirtualMedia != "" || len(bd.Problems) > 0 {
		t.Fatalf("details %+v %v", bd, err)
	}
	if none, err := c.NoVirtualMedia(testCtx(t)); err != nil || none != msg {
		t.Fatalf("NoVirtualMedia: %q %v; want %q", none, err, msg)
	}
}

func TestRedfishInventoryShapes(t *testing.T) {
	s := "/redfish/v1/Systems/1"
	f := oneSystem(t, false, map[string]any{"Manufacturer": "FakeCo", "Model": "X1", "SerialNumber": "SN1",
		"UUID": "1234", "BiosVersion": "B7",
		"MemorySummary": map[string]any{"TotalSystemMemoryGiB": 95.5},
		"Memory":        odata(s + "/Memory"), // only empty slots: the summary counts
		"Processors":    odata(s + "/Processors"), "SimpleStorage": odata(s + "/SimpleStorage"),
		"EthernetInterfaces": odata(s + "/EthernetInterfaces"), "Storage": odata(s + "/Storage")})
	f.docs[s+"/Processors"] = coll(s+"/Processors/P1", s+"/Processors/P2", s+"/Processors/F1")
	f.docs[s+"/Processors/P1"] = map[string]any{"Id": "P1", "ProcessorType": "CPU", "Model": " Fake 8C ", "TotalCores": 8, "TotalThreads": 16}
	f.docs[s+"/Processors/P2"] = map[string]any{"Id": "P2", "ProcessorType": "CPU", "Status": map[string]any{"State": "Absent"}}
	f.docs[s+"/Processors/F1"] = map[string]any{"Id": "F1", "ProcessorType": "FPGA", "Model": "Fake FPGA"}
	f.docs[s+"/Memory"] = coll(s + "/Memory/D1")
	f.docs[s+"/Memory/D1"] = map[string]any{"Id": "D1", "CapacityMiB": 0, "Status": map[string]any{"State": "Absent"}}
	f.docs[s+"/SimpleStorage"] = coll(s + "/SimpleStorage/1")
	f.docs[s+"/SimpleStorage/1"] = map[string]any{"Devices": []any{
		map[string]any{"Name": "Disk A", "Model": "FD1", "CapacityBytes": 1000},
		map[string]any{"Name": "Empty bay", "Status": map[string]any{"State": "Absent"}}}}
	// Storage is listed but not served (404): read as empty.
	f.docs[s+"/EthernetInterfaces"] = coll(s+"/EthernetInterfaces/1", s+"/EthernetInterfaces/1.100", s+"/EthernetInterfaces/x", s+"/EthernetInterfaces/v")
	f.docs[s+"/EthernetInterfaces/v"] = map[string]any{"Id": "v", "MACAddress": "52:54:00:AB:CD:EF", "EthernetInterfaceType": "Virtual"}
	f.docs[s+"/EthernetInterfaces/1"] = map[string]any{"Id": "1", "MACAddress": "52:54:00:AB:CD:EF", "SpeedMbps": 25000}
	f.docs[s+"/EthernetInterfaces/1.100"] = map[string]any{"Id": "1.100", "MACAddress": "52:54:00:AB:CD:EF", "VLAN": map[string]any{"VLANEnable": true, "VLANId": 100}}
	f.docs[s+"/EthernetInterfaces/x"] = map[string]any{"Id": "x"}
	c, err := dialFake(t, f, "", "password")
	if err != nil {
		t.Fatal(err)
	}
	hd, err := c.Inventory(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	want := &wire.HardwareDetails{Manufacturer: "FakeCo", Model: "X1", SerialNumber: "SN1", BIOSVersion: "B7", SystemUUID: "1234",
		CPUs: []wire.CPU{{Model: "Fake 8C", Cores: 8, Threads: 16}}, MemoryMiB: 97792,
		NICs:         []wire.NIC{{Name: "1", MAC: "52:54:00:ab:cd:ef", SpeedMbps: 25000}},
		Disks:        []wire.Disk{{Name: "Disk A", Model: "FD1", SizeBytes: 1000}},
		Firmware:     []wire.Firmware{{Name: "BIOS", Version: "B7"}, {Name: "BMC", Version: "9.1"}},
		Accelerators: []wire.Accelerator{{Name: "F1", Type: "FPGA", Model: "Fake FPGA"}}}
	if !reflect.DeepEqual(hd, want) {
		t.Fatalf("inventory\n got %+v\nwant %+v", hd, want)
	}
	if n := count(f.requests(), "GET /redfish/v1/Managers/1/EthernetInterfaces"); n != 0 {
		t.Fatal("inventory read the manager's own NICs")
	}
}
