package chaos

import (
	"strings"
	"testing"
)

// TestCheckFlash: the firmware checker passes a clean flash and names each
// way a fenced flash can go wrong.
func TestCheckFlash(t *testing.T) {
	clean := FlashCheck{Updates: 1, Version: flashVersion, Adopted: true,
		Ended: "a firmware task of component bmc (BMC task /redfish/v1/TaskService/Tasks/1, started 2026-11-28T07:55:20Z) succeeded: bmc at version ilo5_310"}
	if vs := CheckFlash(clean, "x"); len(vs) != 0 {
		t.Fatalf("clean flash: %v", vs)
	}
	for _, c := range []struct {
		name string
		bad  func(*FlashCheck)
		want string
	}{
		{"second update", func(f *FlashCheck) { f.Updates = 2 }, "accepted 2 firmware updates"},
		{"power change", func(f *FlashCheck) { f.PowerChangesInFlash = 1 }, "1 power changes reached the BMC while its flash ran"},
		{"bricked", func(f *FlashCheck) { f.Bricked = true }, "bricked"},
		{"old version", func(f *FlashCheck) { f.Version = "3.03" }, `at "3.03" after the run`},
		{"not adopted", func(f *FlashCheck) { f.Adopted = false }, "never adopted"},
		{"lost", func(f *FlashCheck) { f.Ended = strings.Replace(f.Ended, ") succeeded", ") lost", 1) }, "did not end succeeded"},
	} {
		f := clean
		c.bad(&f)
		vs := CheckFlash(f, "flash-kill-agent of r1a-1 at 50% of the flash")
		if len(vs) != 1 || vs[0].Checker != "firmware" || !strings.Contains(vs[0].What, c.want) || !strings.Contains(vs[0].What, "at 50% of the flash") {
			t.Errorf("%s: %v, want one firmware violation saying %q", c.name, vs, c.want)
		}
	}
}

// TestFlashPlanSeeded: a seed always draws the same flash fault and share,
// and the draws cover both faults and every share.
func TestFlashPlanSeeded(t *testing.T) {
	seen := map[string]bool{}
	for s := int64(1); s <= 40; s++ {
		k, at := FlashPlan(s)
		if k2, at2 := FlashPlan(s); k2 != k || at2 != at {
			t.Fatalf("seed %d: %s@%d then %s@%d", s, k, at, k2, at2)
		}
		seen[k] = true
		seen[string(rune('0'+at/10))] = true
	}
	for _, want := range []string{FaultFlashKill, FaultFlashPartition, "1", "5", "9"} {
		if !seen[want] {
			t.Errorf("40 seeds never drew %s", want)
		}
	}
	if k, err := KindsOf(FaultsFirmware); err != nil || len(k) != 2 {
		t.Errorf("KindsOf(firmware) = %v, %v", k, err)
	}
}
