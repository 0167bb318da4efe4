package bmc

import (
	"errors"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/agent/errclass"
)

func i64(v int64) *int64 { return &v }

var testRegistry = BIOSRegistry{
	"ProcHyperthreading": {Name: "ProcHyperthreading", Type: "Enumeration", Values: []string{"Enabled", "Disabled"}},
	"ProcCoreDisable":    {Name: "ProcCoreDisable", Type: "Integer", LowerBound: i64(0), UpperBound: i64(64)},
	"ServerAssetTag":     {Name: "ServerAssetTag", Type: "String", MinLength: i64(0), MaxLength: i64(8)},
	"SerialNumber":       {Name: "SerialNumber", Type: "String", ReadOnly: true},
	"TpmVisible":         {Name: "TpmVisible", Type: "Boolean"},
	"AdminPassword":      {Name: "AdminPassword", Type: "Password", MaxLength: i64(4)},
}

func TestValidateBIOS(t *testing.T) {
	for _, tc := range []struct {
		name    string
		desired map[string]string
		want    []string // substrings of the error; none: valid
	}{
		{"valid of every type", map[string]string{"ProcHyperthreading": "Disabled", "ProcCoreDisable": "4", "ServerAssetTag": "rack-1", "TpmVisible": "true", "AdminPassword": "pw"}, nil},
		{"bounds are inclusive", map[string]string{"ProcCoreDisable": "64", "ServerAssetTag": "12345678"}, nil},
		{"unknown", map[string]string{"ProcVirtualization": "Enabled"}, []string{"attribute ProcVirtualization is not in the BMC's attribute registry"}},
		{"unknown, case differs", map[string]string{"prochyperthreading": "Enabled"}, []string{"did you mean ProcHyperthreading?"}},
		{"read-only", map[string]string{"SerialNumber": "X"}, []string{"attribute SerialNumber is read-only"}},
		{"not an allowed value", map[string]string{"ProcHyperthreading": "enabled"}, []string{`ProcHyperthreading: "enabled" is not an allowed value (allowed: Enabled, Disabled)`}},
		{"integer of the wrong type", map[string]string{"ProcCoreDisable": "four"}, []string{`ProcCoreDisable is an Integer; "four" is not one`}},
		{"integer out of range", map[string]string{"ProcCoreDisable": "65"}, []string{"ProcCoreDisable: 65 is out of range [0, 64]"}},
		{"integer below range", map[string]string{"ProcCoreDisable": "-1"}, []string{"-1 is out of range [0, 64]"}},
		{"boolean of the wrong type", map[string]string{"TpmVisible": "Enabled"}, []string{`TpmVisible is a Boolean; "Enabled" is not true or false`}},
		{"string too long", map[string]string{"ServerAssetTag": "123456789"}, []string{"ServerAssetTag: a value of length 9 is out of range [0, 8]"}},
		{"password too long, not echoed", map[string]string{"AdminPassword": "secret"}, []string{"AdminPassword: a value of length 6"}},
		{"every problem named", map[string]string{"SerialNumber": "X", "ProcCoreDisable": "99", "Nope": "1"}, []string{"Nope", "ProcCoreDisable", "SerialNumber"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := BIOSValues(tc.desired, testRegistry)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("BIOSValues = %v; want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrBIOSInvalid) || !errors.Is(err, errclass.ErrFailed) {
				t.Fatalf("BIOSValues = %v; want ErrBIOSInvalid (errclass.ErrFailed)", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q shows a password value", err)
			}
		})
	}
}

func TestBIOSValuesTyped(t *testing.T) {
	v, err := BIOSValues(map[string]string{"ProcCoreDisable": "4", "TpmVisible": "false", "ProcHyperthreading": "Enabled"}, testRegistry)
	if err != nil {
		t.Fatal(err)
	}
	if v["ProcCoreDisable"] != int64(4) || v["TpmVisible"] != false || v["ProcHyperthreading"] != "Enabled" {
		t.Fatalf("typed values = %#v", v)
	}
	if v, err := BIOSValues(map[string]string{"X": "1"}, nil); err != nil || v["X"] != "1" {
		t.Fatalf("no registry: %v %v", v, err)
	}
}

func TestNamedBIOSAttributes(t *testing.T) {
	named := map[string]bool{SettingSMT: false, SettingSRIOV: true, SettingVirtualization: true}
	for _, tc := range []struct {
		vendor string
		want   map[string]string
	}{
		{"HPE", map[string]string{"ProcHyperthreading": "Disabled", "Sriov": "Enabled", "ProcVirtualization": "Enabled"}},
		{"Hewlett Packard Enterprise", map[string]string{"ProcHyperthreading": "Disabled", "Sriov": "Enabled", "ProcVirtualization": "Enabled"}},
		{"Dell", map[string]string{"LogicalProc": "Disabled", "SriovGlobalEnable": "Enabled", "ProcVirtualization": "Enabled"}},
		{"Dell Inc.", map[string]string{"LogicalProc": "Disabled", "SriovGlobalEnable": "Enabled", "ProcVirtualization": "Enabled"}},
	} {
		got, err := NamedBIOSAttributes(tc.vendor, named)
		if err != nil || len(got) != len(tc.want) {
			t.Fatalf("%s: %v, %v", tc.vendor, got, err)
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%s: %s = %q, want %q", tc.vendor, k, got[k], v)
			}
		}
	}
	if _, err := NamedBIOSAttributes("OpenBMC", named); !errors.Is(err, errclass.ErrUnsupported) || !strings.Contains(err.Error(), `"OpenBMC"`) {
		t.Errorf("OpenBMC: %v; want errclass.ErrUnsupported naming the vendor", err)
	}
	if _, err := NamedBIOSAttributes("HPE", map[string]bool{"turboEnabled": true}); !errors.Is(err, errclass.ErrFailed) || !strings.Contains(err.Error(), "turboEnabled") {
		t.Errorf("unknown setting: %v", err)
	}
}
