package bmc

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// BIOS on each vendor's shape: read, registry, validation before anything
// is sent, PATCH of the settings object (with the apply time the BMC
// offers), the reset, and the read-back naming what did not take with the
// BMC's message.
func TestDayTwoBIOS(t *testing.T) {
	for _, tc := range []struct {
		profile, registry string
		desired           map[string]string
		reject            string // made not to take (Knobs.BiosRejects)
		applyTime         string
		invalid           map[string]string
		invalidSays       string
	}{
		{"ilo", "BiosAttributeRegistryU46.v1_2_28", map[string]string{"Sriov": "Disabled", "ProcCoreDisable": "2", "BootMode": "Uefi"}, "Sriov", "",
			map[string]string{"SerialNumber": "X"}, "attribute SerialNumber is read-only"},
		{"idrac", "BiosAttributeRegistry.v1_0_3", map[string]string{"SriovGlobalEnable": "Enabled", "ControlledTurboMinusBin": "3", "BootMode": "Uefi"}, "SriovGlobalEnable", "OnReset",
			map[string]string{"ControlledTurboMinusBin": "16"}, "ControlledTurboMinusBin: 16 is out of range [0, 15]"},
		{"openbmc", "BiosAttributeRegistry", map[string]string{"pvm_stop_at_standby": "Enabled", "hb_field_core_override": "4", "hb_memory_mirror_mode": "Disabled"}, "pvm_stop_at_standby", "",
			map[string]string{"hb_memory_mirror_mode": "On"}, `"On" is not an allowed value (allowed: Enabled, Disabled)`},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			r := startDayTwo(t, tc.profile, bmcsim.Knobs{BiosRejects: []string{tc.reject}})
			ctx := testCtx(t)
			b, err := r.c.BIOS(ctx)
			if err != nil || b.Registry != tc.registry || b.SettingsObject == "" || len(b.Attributes) == 0 {
				t.Fatalf("BIOS = %+v, %v", b, err)
			}
			reg, err := r.c.BIOSRegistry(ctx)
			if err != nil || len(reg) == 0 {
				t.Fatalf("BIOSRegistry = %v, %v", reg, err)
			}
			before := len(r.mutations(t))
			if _, err := r.c.ApplyBIOS(ctx, r.g, "h0", tc.invalid); !errors.Is(err, ErrBIOSInvalid) || !strings.Contains(err.Error(), tc.invalidSays) {
				t.Fatalf("invalid settings: %v; want ErrBIOSInvalid saying %q", err, tc.invalidSays)
			}
			if n := len(r.mutations(t)); n != before {
				t.Fatalf("invalid settings reached the BMC: %d requests audited, %d before", n, before)
			}

			ap, err := r.c.ApplyBIOS(ctx, r.g, "h0", tc.desired)
			if err != nil {
				t.Fatalf("ApplyBIOS: %v", err)
			}
			if len(ap.Changed) != 2 || len(ap.Unchanged) != 1 || ap.ApplyTime != tc.applyTime || !ap.ResetNeeded {
				t.Fatalf("ApplyBIOS = %+v; want 2 changed, 1 already so, apply time %q", ap, tc.applyTime)
			}
			lines := r.mutations(t)
			last := lines[len(lines)-1]
			if last.Method != "PATCH" || last.Path != b.SettingsObject || !strings.Contains(last.UserAgent, "epoch=7") ||
				(tc.applyTime != "") != strings.Contains(last.Body, "@Redfish.SettingsApplyTime") {
				t.Fatalf("last BMC request = %+v; want the PATCH of %s carrying epoch 7", last, b.SettingsObject)
			}
			if p := r.sim.State(0).Bios[0].Pending; len(p) != 2 {
				t.Fatalf("pending on the BMC = %v", p)
			}
			// Before the reset nothing took: all pending.
			res, err := r.c.BIOSResult(ctx, tc.desired)
			if !errors.Is(err, errclass.ErrFailed) || len(res.NotTaken) != 2 || !res.NotTaken[0].Pending || !strings.Contains(err.Error(), "still pending") {
				t.Fatalf("before the reset: %+v, %v", res, err)
			}
			if err := r.c.SetPower(ctx, r.g, "h0", false); err != nil {
				t.Fatal(err)
			}
			if err := r.c.SetPower(ctx, r.g, "h0", true); err != nil {
				t.Fatal(err)
			}
			res, err = r.c.BIOSResult(ctx, tc.desired)
			if !errors.Is(err, errclass.ErrFailed) || len(res.NotTaken) != 1 || len(res.Took) != 2 || res.AppliedAt == "" {
				t.Fatalf("after the reset: %+v, %v; want %s alone not taken", res, err, tc.reject)
			}
			nt := res.NotTaken[0]
			if nt.Attribute != tc.reject || nt.Pending || !strings.Contains(nt.Message, "PropertyNotUpdated") ||
				!strings.Contains(err.Error(), tc.reject) || !strings.Contains(err.Error(), "the BMC says Base.1.12.PropertyNotUpdated") {
				t.Fatalf("not taken = %+v; error %q", nt, err)
			}
			// Once the BMC takes it, all is well.
			if err := r.sim.SetKnobs(0, bmcsim.Knobs{}); err != nil {
				t.Fatal(err)
			}
			if ap, err := r.c.ApplyBIOS(ctx, r.g, "h0", tc.desired); err != nil || len(ap.Changed) != 1 {
				t.Fatalf("second apply: %+v, %v; want the rejected one alone", ap, err)
			}
			if err := r.c.SetPower(ctx, r.g, "h0", false); err != nil {
				t.Fatal(err)
			}
			if err := r.c.SetPower(ctx, r.g, "h0", true); err != nil {
				t.Fatal(err)
			}
			if res, err := r.c.BIOSResult(ctx, tc.desired); err != nil || len(res.Took) != 3 {
				t.Fatalf("after the second reset: %+v, %v", res, err)
			}
			if ap, err := r.c.ApplyBIOS(ctx, r.g, "h0", tc.desired); err != nil || len(ap.Changed) != 0 || ap.ResetNeeded {
				t.Fatalf("third apply (all in place): %+v, %v; want nothing sent", ap, err)
			}
		})
	}
}

// The named settings map to the vendor's attributes and are then checked
// against the registry the BMC serves: the simulated iLO's registry has
// no ProcVirtualization, which the error names; OpenBMC has no fixed
// names.
func TestDayTwoBIOSNamed(t *testing.T) {
	for _, tc := range []struct {
		profile string
		named   map[string]bool
		want    map[string]string
		err     error
		says    string
	}{
		{"ilo", map[string]bool{SettingSMT: false, SettingSRIOV: true}, map[string]string{"ProcHyperthreading": "Disabled", "Sriov": "Enabled"}, nil, ""},
		{"ilo", map[string]bool{SettingVirtualization: true}, map[string]string{"ProcVirtualization": "Enabled"}, ErrBIOSInvalid, "attribute ProcVirtualization is not in the BMC's attribute registry"},
		{"idrac", map[string]bool{SettingSMT: true, SettingSRIOV: true}, map[string]string{"LogicalProc": "Enabled", "SriovGlobalEnable": "Enabled"}, nil, ""},
		{"openbmc", map[string]bool{SettingSMT: true}, nil, errclass.ErrUnsupported, `BMC vendor "OpenBMC" has no fixed BIOS attribute names`},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			r := startDayTwo(t, tc.profile, bmcsim.Knobs{})
			ctx := testCtx(t)
			attrs, err := r.c.BIOSNames(ctx, tc.named)
			if tc.want == nil {
				if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.says) {
					t.Fatalf("BIOSNames = %v, %v; want %v saying %q", attrs, err, tc.err, tc.says)
				}
				return
			}
			if err != nil || len(attrs) != len(tc.want) {
				t.Fatalf("BIOSNames = %v, %v", attrs, err)
			}
			for k, v := range tc.want {
				if attrs[k] != v {
					t.Fatalf("BIOSNames = %v; want %v", attrs, tc.want)
				}
			}
			_, err = r.c.ApplyBIOS(ctx, r.g, "h0", attrs)
			if tc.err == nil && err != nil || tc.err != nil && (!errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.says)) {
				t.Fatalf("ApplyBIOS(%v) = %v; want %v %q", attrs, err, tc.err, tc.says)
			}
		})
	}
}

// A Password attribute reads back as null: it is sent on every apply and
// reported unverifiable, never as a setting that did not take.
func TestDayTwoBIOSPassword(t *testing.T) {
	r := startDayTwo(t, "ilo", bmcsim.Knobs{})
	ctx := testCtx(t)
	desired := map[string]string{"AdminPassword": "pw12", "Sriov": "Disabled"}
	for round := 0; round < 2; round++ {
		ap, err := r.c.ApplyBIOS(ctx, r.g, "h0", desired)
		if err != nil || ap.Changed["AdminPassword"] != "pw12" {
			t.Fatalf("round %d: ApplyBIOS = %+v, %v; want the password sent", round, ap, err)
		}
		if err := r.c.SetPower(ctx, r.g, "h0", false); err != nil {
			t.Fatal(err)
		}
		if err := r.c.SetPower(ctx, r.g, "h0", true); err != nil {
			t.Fatal(err)
		}
		res, err := r.c.BIOSResult(ctx, desired)
		if err != nil || len(res.Unverifiable) != 1 || res.Unverifiable[0] != "AdminPassword" || len(res.Took) != 1 {
			t.Fatalf("round %d: BIOSResult = %+v, %v", round, res, err)
		}
		if strings.Contains(fmt.Sprint(res), "pw12") {
			t.Fatalf("the result shows the password: %+v", res)
		}
	}
}
