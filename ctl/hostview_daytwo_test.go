package ctl

import (
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// host get shows the day-two spec beside what the host has.
func TestHostDetailDayTwo(t *testing.T) {
	off := false
	one := 446
	h := &wire.Host{Name: "h", Rack: "r1",
		BIOS:     &wire.BIOSSpec{SimultaneousMultithreadingEnabled: &off, Settings: map[string]string{"WorkloadProfile": "Virtualization-MaxPerformance", "Sriov": "Enabled"}},
		Firmware: []wire.FirmwareComponent{{Component: "bmc", URL: "http://fw/ilo5_310.bin", Version: "ilo5_310"}},
		RAID:     &wire.RAIDSpec{HardwareRAIDVolumes: []wire.HardwareRAIDVolume{{Name: "os", Level: "1"}}},
		Status: &wire.HostStatus{ProvisioningState: wire.StatePreparing, DayTwo: &wire.DayTwoStatus{
			BIOS: &wire.BIOSStatus{Settings: map[string]string{"WorkloadProfile": "GeneralPowerEfficientCompute", "Sriov": "Enabled"},
				LastApplied: time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC),
				NotApplied:  []wire.BIOSSettingError{{Name: "WorkloadProfile", Value: "Virtualization-MaxPerformance", Message: "Base.1.8.PropertyValueNotInList: rejected"}}},
			Firmware:            []wire.FirmwareStatus{{Component: "iLO 5", Version: "ilo5_303"}},
			HardwareRAIDVolumes: []wire.HardwareRAIDVolume{{Name: "os", Level: "1", SizeGibibytes: &one, Controller: "DE00A000", PhysicalDisks: []string{"0", "1"}}},
			LastErase:           &wire.EraseStatus{Time: time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC), Disks: []string{"drive 0 of DE00A000: Drive.SecureErase"}},
		}}}
	var b strings.Builder
	hostDetail(&b, h)
	out := b.String()
	for _, want := range []string{
		"simultaneousMultithreadingEnabled: want false",
		"Sriov: want Enabled, is Enabled",
		"WorkloadProfile: want Virtualization-MaxPerformance, is GeneralPowerEfficientCompute (differs); did not take: Base.1.8.PropertyValueNotInList: rejected",
		"last applied 2026-11-28T07:00:00Z",
		"bmc: want ilo5_310", "iLO 5: is ilo5_303",
		"want RAID 1 os", "is RAID 1 os, 446 GiB on DE00A000 (0, 1)",
		"2026-11-28T06:00:00Z: drive 0 of DE00A000: Drive.SecureErase",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("host get does not say %q:\n%s", want, out)
		}
	}
}
