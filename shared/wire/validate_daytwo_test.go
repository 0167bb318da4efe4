package wire

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// checkField runs err against a case: nil for field "", else a
// FieldError naming field whose message holds msg.
func checkField(t *testing.T, err error, field, msg string) {
	t.Helper()
	if field == "" {
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != field || !strings.Contains(fe.Message, msg) {
		t.Fatalf("got %v, want field %s with %q", err, field, msg)
	}
	if !strings.HasPrefix(err.Error(), field+": ") {
		t.Fatalf("%v does not start with %s", err, field)
	}
}

func TestValidateHostDayTwo(t *testing.T) {
	yes, two, one, neg := true, 2, 1, -1
	sum := "sha256:" + strings.Repeat("ab", 32)
	fw := func(c ...FirmwareComponent) func(h *Host) { return func(h *Host) { h.Firmware = c } }
	hw := func(v ...HardwareRAIDVolume) func(h *Host) {
		return func(h *Host) { h.RAID = &RAIDSpec{HardwareRAIDVolumes: v} }
	}
	sw := func(v ...SoftwareRAIDVolume) func(h *Host) {
		return func(h *Host) { h.RAID = &RAIDSpec{SoftwareRAIDVolumes: v} }
	}
	cases := []struct {
		name  string
		mod   func(h *Host)
		field string // "" = valid
		msg   string
	}{
		{"none", func(h *Host) {}, "", ""},
		{"everything", func(h *Host) {
			h.BIOS = &BIOSSpec{SimultaneousMultithreadingEnabled: &yes, SRIOVEnabled: &yes,
				Settings: map[string]string{"ProcTurboMode": "Enabled", "Boot_Mode2": "Uefi"}}
			h.Firmware = []FirmwareComponent{{Component: "bmc", URL: "https://fw/bmc.bin", Checksum: sum, Version: "1.2"},
				{Component: "nic:NIC.Slot.1-1", URL: "http://fw/nic.bin", Timeout: Duration(90 * time.Minute)},
				{Component: "BIOS.Setup.1-1", URL: "http://fw/bios.exe", Checksum: "sha512:" + strings.Repeat("0", 128)}}
			h.RAID = &RAIDSpec{KeepExisting: true, HardwareRAIDVolumes: []HardwareRAIDVolume{
				{Name: "root", Level: "1", SizeGibibytes: &two, Controller: "RAID.Integrated.1-1", PhysicalDisks: []string{"d0", "d1"}},
				{Name: "data", Level: "1+0", NumberOfPhysicalDisks: &two, Rotational: &yes}}}
			h.UpdatePolicy = &UpdatePolicy{FirmwareSettings: "onReboot", FirmwareUpdates: "onReboot"}
		}, "", ""},
		{"software raid", sw(SoftwareRAIDVolume{Level: "1", PhysicalDisks: []RootDeviceHints{{DeviceName: "/dev/sda"}, {DeviceName: "/dev/sdb"}}},
			SoftwareRAIDVolume{Level: "0"}), "", ""},

		{"bios attribute name", func(h *Host) { h.BIOS = &BIOSSpec{Settings: map[string]string{"Proc Turbo": "x"}} }, "bios.settings", `"Proc Turbo" is not a BIOS attribute name`},
		{"bios value", func(h *Host) { h.BIOS = &BIOSSpec{Settings: map[string]string{"A": strings.Repeat("v", 300)}} }, "bios.settings.A", "at most 256"},

		{"firmware url scheme", fw(FirmwareComponent{Component: "bmc", URL: "http://a/b"}, FirmwareComponent{Component: "bios", URL: "ftp://fw/bios"}), "firmware[1].url", "must be http(s)"},
		{"firmware url relative", fw(FirmwareComponent{Component: "bmc", URL: "/fw/bmc.bin"}), "firmware[0].url", "must be http(s)"},
		{"firmware url missing", fw(FirmwareComponent{Component: "bmc"}), "firmware[0].url", "is required"},
		{"firmware component missing", fw(FirmwareComponent{URL: "http://a/b"}), "firmware[0].component", "bmc, bios, nic:ID"},
		{"firmware component bare nic", fw(FirmwareComponent{Component: "nic:", URL: "http://a/b"}), "firmware[0].component", "nic:ID"},
		{"firmware component path", fw(FirmwareComponent{Component: "a/b", URL: "http://a/b"}), "firmware[0].component", "must not contain"},
		{"firmware twice", fw(FirmwareComponent{Component: "bmc", URL: "http://a/b"}, FirmwareComponent{Component: "bmc", URL: "http://a/c"}), "firmware[1].component", "also firmware[0]"},
		{"firmware checksum algo", fw(FirmwareComponent{Component: "bmc", URL: "http://a/b", Checksum: "md5:" + strings.Repeat("a", 32)}), "firmware[0].checksum", "sha256:HEX"},
		{"firmware checksum length", fw(FirmwareComponent{Component: "bmc", URL: "http://a/b", Checksum: "sha256:abcd"}), "firmware[0].checksum", "64 hex digits"},
		{"firmware checksum bare", fw(FirmwareComponent{Component: "bmc", URL: "http://a/b", Checksum: strings.Repeat("a", 64)}), "firmware[0].checksum", "sha256:HEX"},
		{"firmware timeout short", fw(FirmwareComponent{Component: "bmc", URL: "http://a/b", Timeout: Duration(time.Minute)}), "firmware[0].timeout", "outside 5m0s to 24h0m0s"},
		{"firmware too many", func(h *Host) {
			for i := 0; i <= MaxFirmwareComponents; i++ {
				h.Firmware = append(h.Firmware, FirmwareComponent{Component: "c" + strings.Repeat("x", i), URL: "http://a/b"})
			}
		}, "firmware", "at most 32"},

		{"raid level", hw(HardwareRAIDVolume{Level: "7"}), "raid.hardwareRAIDVolumes[0].level", `"7" is not one of 0, 1, 2, 5, 6, 1+0, 5+0, 6+0`},
		{"raid level empty", hw(HardwareRAIDVolume{Level: "1"}, HardwareRAIDVolume{}), "raid.hardwareRAIDVolumes[1].level", `"" is not one of`},
		{"raid size", hw(HardwareRAIDVolume{Level: "1", SizeGibibytes: &neg}), "raid.hardwareRAIDVolumes[0].sizeGibibytes", "negative"},
		{"raid disk count", hw(HardwareRAIDVolume{Level: "1", NumberOfPhysicalDisks: &one, Controller: "c", PhysicalDisks: []string{"a", "b"}}),
			"raid.hardwareRAIDVolumes[0].numberOfPhysicalDisks", "physicalDisks names 2"},
		{"raid disks without controller", hw(HardwareRAIDVolume{Level: "1", PhysicalDisks: []string{"a", "b"}}), "raid.hardwareRAIDVolumes[0].controller", "is required"},
		{"raid names twice", hw(HardwareRAIDVolume{Level: "1", Name: "v"}, HardwareRAIDVolume{Level: "0", Name: "v"}), "raid.hardwareRAIDVolumes[1].name", "also raid.hardwareRAIDVolumes[0]"},
		{"raid both", func(h *Host) {
			h.RAID = &RAIDSpec{HardwareRAIDVolumes: []HardwareRAIDVolume{{Level: "1"}}, SoftwareRAIDVolumes: []SoftwareRAIDVolume{{Level: "1"}}}
		}, "raid.softwareRAIDVolumes", "choose hardware or software"},
		{"software level", sw(SoftwareRAIDVolume{Level: "1"}, SoftwareRAIDVolume{Level: "5"}), "raid.softwareRAIDVolumes[1].level", `"5" is not one of 0, 1, 1+0`},
		{"software first level", sw(SoftwareRAIDVolume{Level: "0"}), "raid.softwareRAIDVolumes[0].level", "must be level 1"},
		{"software one disk", sw(SoftwareRAIDVolume{Level: "1", PhysicalDisks: []RootDeviceHints{{DeviceName: "/dev/sda"}}}), "raid.softwareRAIDVolumes[0].physicalDisks", "at least 2"},
		{"software disk hint", sw(SoftwareRAIDVolume{Level: "1", PhysicalDisks: []RootDeviceHints{{DeviceName: "/dev/sda"}, {DeviceName: "sdb"}}}),
			"raid.softwareRAIDVolumes[0].physicalDisks[1].deviceName", "/dev/"},

		{"update policy", func(h *Host) { h.UpdatePolicy = &UpdatePolicy{FirmwareUpdates: "now"} }, "updatePolicy.firmwareUpdates", `"now" is not a policy`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := &Host{Name: "h1", Rack: "r1"}
			c.mod(h)
			checkField(t, ValidateHost(h, "h1"), c.field, c.msg)
		})
	}
}

func TestFirmwareEffectiveTimeout(t *testing.T) {
	if d := (FirmwareComponent{}).EffectiveTimeout(); d != 60*time.Minute {
		t.Fatalf("default %s, want 60m", d)
	}
	if d := (FirmwareComponent{Timeout: Duration(2 * time.Hour)}).EffectiveTimeout(); d != 2*time.Hour {
		t.Fatalf("set %s, want 2h", d)
	}
}

func TestValidateBMCTask(t *testing.T) {
	ok := func() BMCTaskRequest {
		return BMCTaskRequest{Epoch: 7, CreatedIndex: 3, Kind: BMCTaskFirmware, TaskURI: "/redfish/v1/TaskService/Tasks/12", Component: "bmc"}
	}
	cases := []struct {
		name  string
		mod   func(r *BMCTaskRequest)
		field string
		msg   string
	}{
		{"firmware", func(r *BMCTaskRequest) {}, "", ""},
		{"bios url", func(r *BMCTaskRequest) {
			r.Kind, r.Component, r.TaskURI = BMCTaskBIOS, "", "https://bmc/redfish/v1/TaskService/Tasks/1"
		}, "", ""},
		{"epoch", func(r *BMCTaskRequest) { r.Epoch = 0 }, "epoch", "is required"},
		{"created", func(r *BMCTaskRequest) { r.CreatedIndex = 0 }, "createdIndex", "is required"},
		{"kind", func(r *BMCTaskRequest) { r.Kind = "flash" }, "kind", `"flash" is not one of firmware, bios, raid, erase`},
		{"uri missing", func(r *BMCTaskRequest) { r.TaskURI = "" }, "taskURI", "is required"},
		{"uri relative", func(r *BMCTaskRequest) { r.TaskURI = "Tasks/1" }, "taskURI", "neither a BMC path"},
		{"uri scheme", func(r *BMCTaskRequest) { r.TaskURI = "ftp://bmc/t/1" }, "taskURI", "neither a BMC path"},
		{"firmware component", func(r *BMCTaskRequest) { r.Component = "" }, "component", "is required for a firmware task"},
		{"raid component", func(r *BMCTaskRequest) {
			r.Kind, r.Component = BMCTaskRAID, "Create /redfish/v1/Systems/1/Storage/1/Volumes"
		}, "", ""},
		{"erase without component", func(r *BMCTaskRequest) { r.Kind, r.Component = BMCTaskErase, "" }, "", ""},
		{"erase component line break", func(r *BMCTaskRequest) { r.Kind, r.Component = BMCTaskErase, "Drive.SecureErase\n/x" }, "component", "line break"},
		{"bios component", func(r *BMCTaskRequest) { r.Kind = BMCTaskBIOS }, "component", "only applies to a firmware, raid or erase task"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ok()
			c.mod(&r)
			checkField(t, ValidateBMCTask(&r), c.field, c.msg)
		})
	}
	ends := []struct {
		name  string
		end   BMCTaskEnd
		field string
		msg   string
	}{
		{"ok", BMCTaskEnd{Epoch: 1, Outcome: BMCTaskSucceeded}, "", ""},
		{"epoch", BMCTaskEnd{Outcome: BMCTaskFailed}, "epoch", "is required"},
		{"outcome", BMCTaskEnd{Epoch: 1, Outcome: "done"}, "outcome", `"done" is not one of succeeded, failed, lost`},
		{"uri", BMCTaskEnd{Epoch: 1, Outcome: BMCTaskLost, TaskURI: "x y"}, "taskURI", "neither"},
		{"message", BMCTaskEnd{Epoch: 1, Outcome: BMCTaskLost, Message: strings.Repeat("m", 1025)}, "message", "at most 1024"},
	}
	for _, c := range ends {
		t.Run("end "+c.name, func(t *testing.T) { checkField(t, ValidateBMCTaskEnd(&c.end), c.field, c.msg) })
	}
}
