package direct_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// bootMode sets the one-time boot's BootSourceOverrideMode, read back from
// the simulator; a disk image format, Legacy where the system does not offer
// it and secure boot where the system has no SecureBoot resource are
// refused with ErrUnsupported before anything is changed.
func TestBootModeAndImageFormat(t *testing.T) {
	sim, p, _, _, audit := setup(t, 1)
	ctx := context.Background()
	h := host(sim, 0, "password")
	if _, err := p.Register(ctx, h); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		bootMode, format, url, want string
	}{
		{"", "", "http://images.example/os.iso", "UEFI"},
		{wire.BootModeLegacy, "live-iso", "http://images.example/live", "Legacy"},
		{wire.BootModeUEFI, "", "http://images.example/os.ISO", "UEFI"},
	} {
		h.BootMode, h.Image = c.bootMode, &wire.Image{URL: c.url, Format: c.format}
		// Root device hints are recorded and not used: no effect, no error.
		h.RootDeviceHints = &wire.RootDeviceHints{DeviceName: "/dev/sda"}
		if _, err := p.Provision(ctx, h); err != nil {
			t.Fatalf("provision bootMode %q: %v", c.bootMode, err)
		}
		st := sim.State(0)
		if st.BootOverride.Mode != c.want || st.LastBoot != "Cd" || st.Media.Image != c.url {
			t.Fatalf("bootMode %q: boot override %+v, last boot %s, media %+v; want mode %s", c.bootMode, st.BootOverride, st.LastBoot, st.Media, c.want)
		}
		if _, err := p.Deprovision(ctx, h); err != nil {
			t.Fatal(err)
		}
	}

	before := auditCount(t, audit)
	for _, f := range []string{"qcow2", "raw", "vdi", "vmdk"} {
		h.BootMode, h.Image = "", &wire.Image{URL: "http://images.example/os.iso", Format: f}
		_, err := p.Provision(ctx, h)
		if !errors.Is(err, errclass.ErrUnsupported) || !strings.Contains(err.Error(), "--provisioner ironic") ||
			!strings.Contains(err.Error(), "image.format "+f) {
			t.Fatalf("format %s: %v, want ErrUnsupported naming the format and --provisioner ironic", f, err)
		}
	}
	// No profile has a SecureBoot resource: a clear error naming the system.
	h.BootMode, h.Image = wire.BootModeUEFISecure, &wire.Image{URL: "http://images.example/os.iso"}
	_, err := p.Provision(ctx, h)
	if !errors.Is(err, errclass.ErrUnsupported) || !strings.Contains(err.Error(), "Systems/1 has no SecureBoot resource") {
		t.Fatalf("secure boot: %v, want ErrUnsupported naming the system", err)
	}
	if n := auditCount(t, audit); n != before {
		t.Fatalf("refused provisions made %d mutating calls", n-before)
	}
}

// The blade profile offers only UEFI: Legacy is refused before any change.
func TestLegacyRefusedWhereNotOffered(t *testing.T) {
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	sim, err := bmcsim.Start(bmcsim.Config{Hosts: 1, Profile: "blade", AuditPath: audit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	_, p, _, _, _ := setup(t, 1)
	ctx := context.Background()
	h := host(sim, 0, "password")
	h.BootMode, h.Image = wire.BootModeLegacy, &wire.Image{URL: "http://images.example/os.iso"}
	_, err = p.Provision(ctx, h)
	if !errors.Is(err, errclass.ErrUnsupported) || !strings.Contains(err.Error(), "not Legacy") {
		t.Fatalf("legacy on blade: %v, want ErrUnsupported", err)
	}
	if n := auditCount(t, audit); n != 0 {
		t.Fatalf("refused legacy boot made %d mutating calls", n)
	}
	// UEFI on the same system works.
	h.BootMode = wire.BootModeUEFI
	if _, err := p.Provision(ctx, h); err != nil {
		t.Fatalf("uefi on blade: %v", err)
	}
	if st := sim.State(0); st.BootOverride.Mode != "UEFI" {
		t.Fatalf("blade boot override %+v", st.BootOverride)
	}
}
