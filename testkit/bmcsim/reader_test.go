package bmcsim

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// The expectations in the fixtures are hand-written; this test reads every
// profile over HTTP by the rules of DESIGN.md ("What a reader must find"),
// following links only, and checks the two agree: a typo in a fixture or
// in its expectations fails here, and the rules are shown to be readable.
func TestExpectationsMatchTheTree(t *testing.T) {
	for _, name := range Profiles() {
		t.Run(name, func(t *testing.T) {
			sim, err := Start(Config{Hosts: 2, Profile: name})
			if err != nil {
				t.Fatal(err)
			}
			defer sim.Close()
			if sim.Profile() != name {
				t.Fatalf("Profile() = %q", sim.Profile())
			}
			rd := &reader{t: t, base: sim.URL(1)}
			addrs := sim.SystemAddresses(1)
			if sim.Address(1) != addrs[0] {
				t.Errorf("Address(1) %s is not SystemAddresses(1)[0] %s", sim.Address(1), addrs[0])
			}
			for j, addr := range addrs {
				_, sys, _ := strings.Cut(addr, "127.0.0.1:")
				sys = sys[strings.Index(sys, "/"):]
				hw, bmc := rd.hardware(sys), rd.bmc(sys)
				if want := sim.ExpectedHardware(1, j); !reflect.DeepEqual(hw, want) {
					t.Errorf("system %d (%s) hardware\n read %+v\n want %+v", j, sys, hw, want)
				}
				if want := sim.ExpectedBMC(1, j); !reflect.DeepEqual(bmc, want) {
					t.Errorf("system %d (%s) BMC\n read %+v\n want %+v", j, sys, bmc, want)
				}
				if len(hw.NICs) == 0 || hw.NICs[0].MAC != sim.SystemMAC(1, j) {
					t.Errorf("system %d: SystemMAC %s is not the first NIC's %+v", j, sim.SystemMAC(1, j), hw.NICs)
				}
			}
		})
	}
}

type reader struct {
	t    *testing.T
	base string
}

type obj = map[string]any

func (r *reader) get(path string) obj {
	r.t.Helper()
	resp, body := req(r.t, "GET", r.base+path, "", map[string]string{"basic": "admin:password"})
	if resp.StatusCode != 200 {
		r.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	var m obj
	if err := json.Unmarshal(body, &m); err != nil {
		r.t.Fatal(err)
	}
	return m
}

func (r *reader) members(m obj, key string) []obj {
	link := odataID(m[key])
	if link == "" {
		return nil
	}
	var out []obj
	for _, x := range r.get(link)["Members"].([]any) {
		out = append(out, r.get(odataID(x)))
	}
	return out
}

func str(m obj, keys ...string) string {
	var x any = m
	for _, k := range keys {
		mm, _ := x.(map[string]any)
		x = mm[k]
	}
	s, _ := x.(string)
	return s
}

func num(m obj, k string) int64 {
	f, _ := m[k].(float64)
	return int64(f)
}

func absent(m obj) bool { return str(m, "Status", "State") == "Absent" }

func (r *reader) hardware(sysPath string) wire.HardwareDetails {
	s := r.get(sysPath)
	hw := wire.HardwareDetails{Manufacturer: str(s, "Manufacturer"), Model: str(s, "Model"), SerialNumber: str(s, "SerialNumber"),
		BIOSVersion: str(s, "BiosVersion"), SystemUUID: str(s, "UUID")}
	for _, p := range r.members(s, "Processors") {
		if absent(p) {
			continue
		}
		if typ := str(p, "ProcessorType"); typ != "" && typ != "CPU" {
			hw.Accelerators = append(hw.Accelerators, wire.Accelerator{Name: str(p, "Id"), Type: typ, Model: str(p, "Model")})
			continue
		}
		hw.CPUs = append(hw.CPUs, wire.CPU{Model: str(p, "Model"), Cores: int(num(p, "TotalCores")), Threads: int(num(p, "TotalThreads"))})
	}
	ms, _ := s["MemorySummary"].(map[string]any)
	gib, _ := ms["TotalSystemMemoryGiB"].(float64)
	hw.MemoryMiB = int(gib * 1024)
	if hw.MemoryMiB == 0 {
		for _, d := range r.members(s, "Memory") {
			if !absent(d) {
				hw.MemoryMiB += int(num(d, "CapacityMiB"))
			}
		}
	}
	for _, n := range r.members(s, "EthernetInterfaces") {
		vlan, _ := n["VLAN"].(map[string]any)
		links, _ := n["Links"].(map[string]any)
		related, _ := links["RelatedInterfaces"].([]any)
		typ := str(n, "EthernetInterfaceType")
		if typ == "Virtual" || len(related) > 0 || links["HostInterface"] != nil ||
			(typ != "Physical" && vlan["VLANEnable"] == true) || str(n, "MACAddress") == "" {
			continue
		}
		hw.NICs = append(hw.NICs, wire.NIC{Name: str(n, "Id"), MAC: strings.ToLower(str(n, "MACAddress")), SpeedMbps: int(num(n, "SpeedMbps"))})
	}
	for _, st := range r.members(s, "Storage") {
		for _, x := range st["Drives"].([]any) {
			d := r.get(odataID(x))
			if !absent(d) {
				name := str(d, "Id")
				if name == "" {
					name = str(d, "Name")
				}
				hw.Disks = append(hw.Disks, wire.Disk{Name: name, Model: str(d, "Model"), SizeBytes: num(d, "CapacityBytes"), Type: str(d, "MediaType")})
			}
		}
	}
	if len(hw.Disks) == 0 {
		for _, ss := range r.members(s, "SimpleStorage") {
			for _, x := range ss["Devices"].([]any) {
				d := x.(map[string]any)
				if !absent(d) {
					hw.Disks = append(hw.Disks, wire.Disk{Name: str(d, "Name"), Model: str(d, "Model"), SizeBytes: num(d, "CapacityBytes"), Type: str(d, "MediaType")})
				}
			}
		}
	}
	mgr := r.get(odataID(s["Links"].(map[string]any)["ManagedBy"].([]any)[0]))
	hw.Firmware = []wire.Firmware{{Name: "BIOS", Version: str(s, "BiosVersion")}, {Name: "BMC", Version: str(mgr, "FirmwareVersion")}}
	return hw
}

func (r *reader) bmc(sysPath string) wire.BMCDetails {
	root := r.get(v1)
	s := r.get(sysPath)
	mgrPath := odataID(s["Links"].(map[string]any)["ManagedBy"].([]any)[0])
	mgr := r.get(mgrPath)
	d := wire.BMCDetails{Protocol: "redfish", RedfishVersion: str(root, "RedfishVersion"), Vendor: str(root, "Vendor"),
		Model: str(mgr, "Model"), FirmwareVersion: str(mgr, "FirmwareVersion"), Auth: "basic", System: sysPath, Manager: mgrPath}
	if d.Vendor == "" {
		d.Vendor = str(mgr, "Manufacturer")
	}
	if str(root, "Links", "Sessions") != "" || odataID(root["Links"].(map[string]any)["Sessions"]) != "" {
		d.Auth = "session"
	}
	pick := func(devs []obj) bool {
		for _, vm := range devs {
			if takesCD(vm) {
				d.VirtualMedia = str(vm, "@odata.id")
				d.VirtualMediaMethod = "patch"
				if acts, ok := vm["Actions"].(map[string]any); ok && acts["#VirtualMedia.InsertMedia"] != nil {
					d.VirtualMediaMethod = "actions"
				}
				return true
			}
		}
		return false
	}
	looked := []string{strings.TrimPrefix(sysPath, v1+"/")}
	found := pick(r.members(s, "VirtualMedia"))
	for _, m := range s["Links"].(map[string]any)["ManagedBy"].([]any) {
		if found {
			break
		}
		looked = append(looked, strings.TrimPrefix(odataID(m), v1+"/"))
		found = pick(r.members(r.get(odataID(m)), "VirtualMedia"))
	}
	boot, _ := s["Boot"].(map[string]any)
	if !found {
		msg := "no virtual media device taking CD or DVD under " + strings.Join(looked, " or ")
		targets := strs(boot["BootSourceOverrideTarget@Redfish.AllowableValues"])
		offered := func(t string) bool { return len(targets) == 0 || slices.Contains(targets, t) }
		var ways []string
		if _, uri := boot["HttpBootUri"]; uri && offered("UefiHttp") {
			ways = append(ways, "UEFI HTTP")
		}
		if offered("Pxe") {
			ways = append(ways, "PXE")
		}
		if len(ways) == 0 { // a BMC booting from the network lacks nothing to provision
			d.Problems = []string{msg}
		}
	}
	d.BootModes = strs(boot["BootSourceOverrideMode@Redfish.AllowableValues"])
	if len(d.BootModes) == 0 {
		d.BootModes = []string{"UEFI"}
	}
	return d
}
