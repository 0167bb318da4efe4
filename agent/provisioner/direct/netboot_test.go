package direct_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/agent/provisioner/direct"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// netSim starts one BMC of profile with FetchMedia and returns it with the
// host of its system j.
func netSim(t *testing.T, profile string, j int) (*bmcsim.Sim, provisioner.Host) {
	t.Helper()
	sim, err := bmcsim.Start(bmcsim.Config{Hosts: 1, Profile: profile, FetchMedia: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	return sim, provisioner.Host{Name: profile + "-h", Username: "admin", Password: "password", Online: true,
		BMC: wire.BMC{Address: sim.SystemAddresses(0)[j]}, BootMACAddress: sim.SystemMAC(0, j)}
}

// waitNetRead waits until system j's network boot read its URL.
func waitNetRead(t *testing.T, sim *bmcsim.Sim, j int) bmcsim.NetBoot {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		nb := sim.State(0).Systems[j].NetBoot
		if nb.Read > 0 || nb.ReadError != "" || time.Now().After(deadline) {
			return nb
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// UEFI HTTP boot from the rack's image cache: the spec asks for it on a
// blade that also has virtual media; the BMC is given the artifact
// server's URL of the verified image in HttpBootUri, boots once from
// UefiHttp and fetches the image from there; nothing is inserted.
func TestUEFIHTTPBootFromRackCache(t *testing.T) {
	body := []byte(strings.Repeat("live iso ", 100000))
	sum := sha256.Sum256(body)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "live.iso", time.Unix(0, 0), strings.NewReader(string(body)))
	}))
	defer origin.Close()
	sim, h := netSim(t, "blade", 0)
	art := startArtifacts(t, t.TempDir())
	p := newDirect(t, art)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h.BootMethod = wire.BootMethodUEFIHTTP
	h.Image = &wire.Image{URL: origin.URL + "/live.iso", Checksum: hex.EncodeToString(sum[:]), ChecksumType: wire.ChecksumSHA256}
	res, err := p.Provision(ctx, h)
	if err != nil || res.InProgress {
		t.Fatalf("provision: %v %+v", err, res)
	}
	want := art.BaseURL() + "/images/sha256-" + h.Image.Checksum + "/live.iso"
	st := sim.State(0)
	s := st.Systems[0]
	if s.Power != "On" || s.LastBoot != "UefiHttp" || s.BootOverride.HTTPBootURI != want || s.BootOverride.Mode != "UEFI" {
		t.Fatalf("system after provision: %+v; want On, booted once by UefiHttp from %s", s, want)
	}
	if !strings.Contains(res.Message, "UEFI HTTP") {
		t.Errorf("message %q does not say UEFI HTTP", res.Message)
	}
	for _, m := range st.VirtualMedia {
		if m.Inserted {
			t.Errorf("media inserted with bootMethod uefihttp: %+v", m)
		}
	}
	if nb := waitNetRead(t, sim, 0); nb.URL != want || nb.Read != bmcsim.FetchMediaBytes || nb.ReadError != "" {
		t.Fatalf("network boot %+v; want %d bytes read of %s", nb, bmcsim.FetchMediaBytes, want)
	}
	if _, err := p.Deprovision(ctx, h); err != nil {
		t.Fatal(err)
	}
	if s := sim.State(0).Systems[0]; s.Power != "Off" {
		t.Fatalf("after deprovision: %+v", s)
	}
}

// A PXE boot by default (no virtual media, no HttpBootUri): the simulated
// network hands the host the knob's image, which it fetches.
func TestPXEBootByDefault(t *testing.T) {
	img := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "pxe.img", time.Unix(0, 0), strings.NewReader(strings.Repeat("p", 100000)))
	}))
	defer img.Close()
	sim, h := netSim(t, "no-vmedia", 0)
	if err := sim.SetKnobs(0, bmcsim.Knobs{PXEImageURL: img.URL + "/pxe.img"}); err != nil {
		t.Fatal(err)
	}
	p := newDirect(t, nil)
	ctx := context.Background()
	h.Image = &wire.Image{URL: "http://images.example/os.iso"}
	res, err := p.Provision(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if s := sim.State(0).Systems[0]; s.Power != "On" || s.LastBoot != "Pxe" || s.BootOverride.Mode != "UEFI" || !strings.Contains(res.Message, "PXE") {
		t.Fatalf("system %+v, message %q; want On, booted once from Pxe", s, res.Message)
	}
	if nb := waitNetRead(t, sim, 0); nb.Target != "Pxe" || nb.Read != bmcsim.FetchMediaBytes {
		t.Fatalf("network boot %+v", nb)
	}
}

// What cannot be done is refused before anything changes, naming what
// is missing; a HttpBootUri the BMC refuses, or accepts and does not
// keep, fails with the URL and what the BMC read back.
func TestNetworkBootRefusals(t *testing.T) {
	ctx := context.Background()
	image := &wire.Image{URL: "http://images.example/os.iso"}
	for _, c := range []struct {
		name, profile string
		system        int
		method, mode  string
		drive         bool
		knob          string
		class         error
		says          string
		changed       bool
	}{
		{name: "vmedia without a device", profile: "no-vmedia", method: wire.BootMethodVirtualMedia, class: errclass.ErrUnsupported,
			says: "no virtual media device taking CD or DVD under Systems/1 or Managers/1"},
		{name: "uefihttp without HttpBootUri", profile: "no-vmedia", method: wire.BootMethodUEFIHTTP, class: errclass.ErrUnsupported,
			says: "Systems/1 has no Boot.HttpBootUri"},
		{name: "uefihttp in legacy mode", profile: "no-vmedia", method: wire.BootMethodUEFIHTTP, mode: wire.BootModeLegacy,
			class: errclass.ErrUnsupported, says: "needs a UEFI boot mode"},
		{name: "config drive without virtual media", profile: "blade", system: 1, drive: true, class: errclass.ErrUnsupported,
			says: "bootMethod uefihttp boots from the network"},
		{name: "HttpBootUri refused", profile: "blade", system: 1, knob: bmcsim.HTTPBootURIRefuse, class: errclass.ErrFailed,
			says: `the BMC refused UEFI HTTP boot from HttpBootUri "http://images.example/os.iso"`},
		{name: "HttpBootUri not kept", profile: "blade", system: 3, knob: bmcsim.HTTPBootURIIgnore, class: errclass.ErrFailed,
			says: `accepted HttpBootUri "http://images.example/os.iso" but Systems/Blade4 reads back ""`, changed: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			sim, h := netSim(t, c.profile, c.system)
			if c.knob != "" {
				if err := sim.SetKnobs(0, bmcsim.Knobs{HTTPBootURIFault: c.knob}); err != nil {
					t.Fatal(err)
				}
			}
			var p *direct.Provisioner
			if c.drive {
				p = newDirect(t, startArtifacts(t, ""))
				h.ConfigDrive = driveContent()
			} else {
				p = newDirect(t, nil)
			}
			h.BootMethod, h.BootMode, h.Image = c.method, c.mode, image
			before := sim.State(0).Mutations
			_, err := p.Provision(ctx, h)
			if !errors.Is(err, c.class) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("provision: %v; want %v saying %q", err, c.class, c.says)
			}
			st := sim.State(0)
			if !c.changed && st.Mutations != before {
				t.Errorf("a refused provision made %d changes", st.Mutations-before)
			}
			if s := st.Systems[c.system]; s.Power == "On" {
				t.Errorf("a failed provision powered the host on: %+v", s)
			}
		})
	}
}

// A BMC without virtual media that boots from the network lacks nothing
// a host needs to be provisioned: registration names no problem (the
// host boots its image from the network), unless the host asks for a
// config drive, which only virtual media carries.
func TestRegistrationNoVirtualMediaOnlyForConfigDrive(t *testing.T) {
	for _, c := range []struct {
		profile string
		system  int
	}{
		{"no-vmedia", 0},
		{"blade", 1},
		{"blade", 3},
	} {
		_, h := netSim(t, c.profile, c.system)
		res, err := newDirect(t, nil).Register(context.Background(), h)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(res.Message, "lacks") || res.BMCDetails == nil || len(res.BMCDetails.Problems) > 0 {
			t.Errorf("%s system %d without a config drive: registration says %q, problems %v; want nothing lacking", c.profile, c.system, res.Message, res.BMCDetails)
		}
		h.ConfigDriveWanted = true
		res, err = newDirect(t, nil).Register(context.Background(), h)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Message, "the BMC lacks: no virtual media device taking CD or DVD under") ||
			!strings.Contains(res.Message, "need a config drive") || len(res.BMCDetails.Problems) != 1 {
			t.Errorf("%s system %d with a config drive: registration says %q, problems %v; want the missing CD the config drive needs", c.profile, c.system, res.Message, res.BMCDetails.Problems)
		}
	}
}
