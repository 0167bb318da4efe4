package ctl

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// host get on a host whose BMC lacks a virtual CD, and an IPMI one.
func TestHostDetailBMC(t *testing.T) {
	var b strings.Builder
	hostDetail(&b, &wire.Host{Name: "h", Rack: "r1", Status: &wire.HostStatus{ProvisioningState: wire.StateAvailable,
		HardwareDetails: &wire.HardwareDetails{Accelerators: []wire.Accelerator{{Name: "F1", Type: "FPGA"}}},
		BMCDetails: &wire.BMCDetails{Protocol: "redfish", RedfishVersion: "1.11.0", Auth: "basic", System: "/redfish/v1/Systems/1",
			Problems: []string{"no virtual media device taking CD or DVD under Systems/1 or Managers/1"}}}})
	lines := map[string]string{}
	for _, l := range strings.Split(b.String(), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			lines[k] = strings.TrimSpace(v)
		}
	}
	for k, want := range map[string]string{
		"Hardware":    "1 accelerator",
		"BMC details": "redfish 1.11.0, auth basic, system /redfish/v1/Systems/1, no virtual media",
		"BMC lacks":   "no virtual media device taking CD or DVD under Systems/1 or Managers/1",
	} {
		if lines[k] != want {
			t.Errorf("host get %s: %q; want %q:\n%s", k, lines[k], want, b.String())
		}
	}
	if got := bmcSummary(&wire.BMCDetails{Protocol: "ipmi", Auth: "ipmi"}); got != "ipmi, auth ipmi" {
		t.Errorf("IPMI BMC details %q", got)
	}
}

// host get's operation lines: ended, running, not finished.
func TestHostDetailOperationHistory(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	defer func(f func() time.Time) { now = f }(now)
	now = func() time.Time { return t0.Add(10 * time.Minute) }
	var b strings.Builder
	hostDetail(&b, &wire.Host{Name: "h", Rack: "r1", Status: &wire.HostStatus{ProvisioningState: wire.StateProvisioning,
		OperationHistory: &wire.OperationHistory{
			Register:    wire.OperationMetric{Start: t0, End: t0.Add(1500 * time.Millisecond)},
			Inspect:     wire.OperationMetric{Start: t0.Add(2 * time.Second), End: t0.Add(6200 * time.Millisecond)},
			Provision:   wire.OperationMetric{Start: t0.Add(5 * time.Minute)},
			Deprovision: wire.OperationMetric{Start: t0.Add(time.Minute)},
		}}})
	lines := map[string]string{}
	var order []string
	for _, l := range strings.Split(b.String(), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			lines[k] = strings.TrimSpace(v)
			order = append(order, k)
		}
	}
	for k, want := range map[string]string{
		"Register":    "1.5 s (ended 2026-03-01T10:00:01Z)",
		"Inspect":     "4.2 s (ended 2026-03-01T10:00:06Z)",
		"Provision":   "running for 5m0s (since 2026-03-01T10:05:00Z)",
		"Deprovision": "did not finish (started 2026-03-01T10:01:00Z)",
	} {
		if lines[k] != want {
			t.Errorf("host get %s: %q; want %q:\n%s", k, lines[k], want, b.String())
		}
	}
	if got := strings.Join(order, ","); !strings.Contains(got, "Register,Inspect,Provision,Deprovision") {
		t.Errorf("order %s", got)
	}
	b.Reset()
	hostDetail(&b, &wire.Host{Name: "h", Rack: "r1", Status: &wire.HostStatus{ProvisioningState: wire.StateAvailable}})
	if strings.Contains(b.String(), "Register") {
		t.Errorf("a host without history shows operations:\n%s", b.String())
	}
}

// host get shows the config drive the host booted with: read, and not yet.
func TestHostDetailConfigDrive(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		cd   *wire.ConfigDriveStatus
		want string
	}{
		{&wire.ConfigDriveStatus{Size: 385024, PublishedAt: t0, ReadAt: t0.Add(3200 * time.Millisecond)},
			"376.0 KiB, published 2026-03-01T10:00:00Z, read by the BMC 2026-03-01T10:00:03Z (3.2s later)"},
		{&wire.ConfigDriveStatus{Size: 900, PublishedAt: t0}, "900 bytes, published 2026-03-01T10:00:00Z, not read by the BMC yet"},
	} {
		var b strings.Builder
		hostDetail(&b, &wire.Host{Name: "h", Rack: "r1", Status: &wire.HostStatus{ProvisioningState: wire.StateProvisioned, ConfigDrive: c.cd}})
		got := ""
		for _, l := range strings.Split(b.String(), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && k == "Config drive" {
				got = strings.TrimSpace(v)
			}
		}
		if got != c.want {
			t.Errorf("host get Config drive: %q; want %q:\n%s", got, c.want, b.String())
		}
	}
}

// host get shows where the config drive is served (the artifact server the
// BMC read it from) on the line after it; a status without the server (an
// agent predating it) shows no such line.
func TestHostDetailConfigDriveServer(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var b strings.Builder
	hostDetail(&b, &wire.Host{Name: "h", Rack: "r1", Status: &wire.HostStatus{ProvisioningState: wire.StateProvisioned,
		ConfigDrive: &wire.ConfigDriveStatus{Server: "https://10.0.0.5:7482", Size: 900, PublishedAt: t0}}})
	lines := strings.Split(b.String(), "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "Config drive:") })
	if i < 0 || i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) != "served by https://10.0.0.5:7482" {
		t.Errorf("host get: want the config drive's server on the line after it:\n%s", b.String())
	}
	b.Reset()
	hostDetail(&b, &wire.Host{Name: "h", Rack: "r1", Status: &wire.HostStatus{ProvisioningState: wire.StateProvisioned,
		ConfigDrive: &wire.ConfigDriveStatus{Size: 900, PublishedAt: t0}}})
	if strings.Contains(b.String(), "served by") {
		t.Errorf("host get of a drive without its server shows one:\n%s", b.String())
	}
}

// host get and host list show the power as the BMC read it: a host whose
// BMC was never reached (poweredOn false, powerState unknown) is unknown,
// not off; an older agent's status without powerState still reads on/off.
func TestHostPowerUnknownUntilRead(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		st   wire.HostStatus
		want string
	}{
		{wire.HostStatus{ProvisioningState: wire.StateRegistering, PowerState: wire.PowerUnknown, LastUpdated: t0}, "unknown"},
		{wire.HostStatus{ProvisioningState: wire.StateAvailable, PowerState: wire.PowerOff, LastUpdated: t0}, "off"},
		{wire.HostStatus{ProvisioningState: wire.StateAvailable, PoweredOn: true, PowerState: wire.PowerOn, LastUpdated: t0}, "on"},
		{wire.HostStatus{ProvisioningState: wire.StateAvailable, PoweredOn: true, LastUpdated: t0}, "on"},
	} {
		h := &wire.Host{Name: "h", Rack: "r1", Status: &c.st}
		var b strings.Builder
		hostDetail(&b, h)
		got := ""
		for _, l := range strings.Split(b.String(), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && k == "Power" {
				got = strings.TrimSpace(v)
			}
		}
		if got != c.want || hostPower(h) != c.want {
			t.Errorf("%+v: host get Power %q, list POWER %q; want %q", c.st, got, hostPower(h), c.want)
		}
	}
}
