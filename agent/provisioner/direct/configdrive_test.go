package direct_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/artifact"
	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/configdrive"
	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/agent/provisioner/direct"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// startArtifacts serves an artifact server on a loopback port (the URL the
// simulated BMCs are given); cacheDir "" leaves the image cache off.
func startArtifacts(t testing.TB, cacheDir string) *artifact.Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := artifact.Config{BaseURL: "http://" + ln.Addr().String()}
	if cacheDir != "" {
		cfg.CacheDir, cfg.CacheSize = cacheDir, 1<<30
	}
	s, err := artifact.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); s.Close() })
	return s
}

func newDirect(t testing.TB, art *artifact.Server) *direct.Provisioner {
	t.Helper()
	h := fence.NewHolder(nil)
	h.Set(fence.Lease{Rack: "r1", Holder: "t", Epoch: 7, TTL: time.Hour, Deadline: time.Now().Add(time.Hour)})
	p, err := direct.New(direct.Config{Guard: guard.NewGuard(h, nil), Artifacts: art,
		BMC: bmc.Options{Timeout: 20 * time.Second, MutationTimeout: 20 * time.Second, UserAgent: bmc.AgentUserAgent("test", "t", "r1", h)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

func driveContent() *provisioner.ConfigDrive {
	return &provisioner.ConfigDrive{UserData: []byte("#cloud-config\nhostname: drive-test\n"),
		NetworkData: []byte(`{"links":[],"networks":[],"services":[]}`),
		MetaData:    []byte(`{"public_keys":{"ops":"ssh-ed25519 AAAA ops"}}`)}
}

func mediaAt(st bmcsim.State, path string) bmcsim.MediaState {
	for _, m := range st.VirtualMedia {
		if m.Path == path {
			return m
		}
	}
	return bmcsim.MediaState{}
}

func fetch(t testing.TB, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// Every profile: the config drive goes in the second device the published
// shape has (iLO's Floppy/USBStick VirtualMedia/1, iDRAC's USBStick
// VirtualMedia/2, sushy-tools' Floppy), the image in the CD; a BMC with one
// device refuses before anything is inserted. The drive the BMC would
// fetch is read back from the artifact server by isoinfo; deprovision
// ejects both and the drive's URL is gone.
func TestConfigDriveInSecondDevice(t *testing.T) {
	cases := []struct{ profile, cd, drive string }{
		{"ilo", "/redfish/v1/Managers/1/VirtualMedia/2", "/redfish/v1/Managers/1/VirtualMedia/1"},
		{"idrac", "/redfish/v1/Systems/System.Embedded.1/VirtualMedia/1", "/redfish/v1/Systems/System.Embedded.1/VirtualMedia/2"},
		{"basic-only", "/redfish/v1/Managers/1/VirtualMedia/Cd", "/redfish/v1/Managers/1/VirtualMedia/Floppy"},
		{"system-vmedia-patch", "/redfish/v1/Systems/437XR1138R2/VirtualMedia/CD1", "/redfish/v1/Systems/437XR1138R2/VirtualMedia/Floppy1"},
		{"default", "/redfish/v1/Managers/1/VirtualMedia/CD1", ""},
		{"openbmc", "/redfish/v1/Managers/bmc/VirtualMedia/Slot_0", ""},
	}
	isoinfo := testenv.LookPath(t, "isoinfo") // fails in CI, skips loudly elsewhere
	art := startArtifacts(t, "")
	p := newDirect(t, art)
	iso := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "live.iso", time.Unix(0, 0), strings.NewReader(strings.Repeat("iso", 1<<16)))
	}))
	defer iso.Close()
	image := iso.URL + "/live.iso"
	for _, c := range cases {
		t.Run(c.profile, func(t *testing.T) {
			// FetchMedia: the simulated BMC reads what it is given, from
			// the artifact server for the drive, as a real one does.
			sim, err := bmcsim.Start(bmcsim.Config{Hosts: 1, Profile: c.profile, FetchMedia: true})
			if err != nil {
				t.Fatal(err)
			}
			defer sim.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			h := provisioner.Host{Name: "cd-" + c.profile, Username: "admin", Password: "password", Online: true,
				BMC: wire.BMC{Address: sim.Address(0)}, Image: &wire.Image{URL: image, Format: wire.FormatLiveISO}, ConfigDrive: driveContent()}
			before := sim.State(0).Mutations
			_, err = p.Provision(ctx, h)
			st := sim.State(0)
			if c.drive == "" {
				if st.Mutations != before {
					t.Fatalf("a provision refused for want of a second device changed the BMC %d times", st.Mutations-before)
				}
				if !errors.Is(err, errclass.ErrUnsupported) || !strings.Contains(err.Error(), "no second virtual media device (USBStick, Floppy or another CD/DVD) beside") {
					t.Fatalf("provision on a one-device BMC: %v; want ErrUnsupported naming what was searched", err)
				}
				if m := mediaAt(st, c.cd); m.Inserted || st.Power == "On" {
					t.Fatalf("a refused provision changed the BMC: media %+v, power %s", m, st.Power)
				}
				if art.HasDrive(h.Name) {
					t.Fatal("the refused host's drive is still served")
				}
				return
			}
			if err != nil {
				t.Fatalf("provision: %v", err)
			}
			cd, dr := mediaAt(st, c.cd), mediaAt(st, c.drive)
			if !cd.Inserted || cd.Image != image || st.Power != "On" {
				t.Fatalf("CD %+v, power %s; want the image inserted and the host on", cd, st.Power)
			}
			if !dr.Inserted || !strings.HasPrefix(dr.Image, art.BaseURL()+"/drives/") {
				t.Fatalf("second device %+v; want the artifact server's drive URL", dr)
			}
			if cd.Read != bmcsim.FetchMediaBytes || dr.Read == 0 || dr.ReadError != "" {
				t.Fatalf("the BMC's reads: CD %d bytes (%s), drive %d bytes (%s)", cd.Read, cd.ReadError, dr.Read, dr.ReadError)
			}
			// A retried provision builds the same drive: same URL, nothing
			// ejected and inserted again.
			if _, err := p.Provision(ctx, h); err != nil {
				t.Fatalf("provision again: %v", err)
			}
			if again := mediaAt(sim.State(0), c.drive); again.Image != dr.Image || !again.Inserted {
				t.Fatalf("provision again moved the drive: %+v, was %s", again, dr.Image)
			}
			code, img := fetch(t, dr.Image)
			if code != http.StatusOK {
				t.Fatalf("GET %s: %d", dr.Image, code)
			}
			f := filepath.Join(t.TempDir(), "drive.iso")
			if err := os.WriteFile(f, img, 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(isoinfo, "-i", f, "-R", "-x", "/"+configdrive.UserDataPath).Output()
			if err != nil || string(out) != string(h.ConfigDrive.UserData) {
				t.Fatalf("user_data read back by isoinfo: %q %v", out, err)
			}
			if _, err := p.Deprovision(ctx, h); err != nil {
				t.Fatalf("deprovision: %v", err)
			}
			st = sim.State(0)
			if mediaAt(st, c.cd).Inserted || mediaAt(st, c.drive).Inserted || st.Power != "Off" {
				t.Fatalf("after deprovision: %+v power %s", st.VirtualMedia, st.Power)
			}
			if code, _ := fetch(t, dr.Image); code != http.StatusNotFound {
				t.Fatalf("the drive's URL answers %d after deprovision, want 404", code)
			}
		})
	}
}

func TestConfigDriveNeedsArtifactServer(t *testing.T) {
	sim, err := bmcsim.Start(bmcsim.Config{Hosts: 1, Profile: "ilo"})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	p := newDirect(t, nil)
	h := provisioner.Host{Name: "h", Username: "admin", Password: "password", Online: true,
		BMC: wire.BMC{Address: sim.Address(0)}, Image: &wire.Image{URL: "http://i/x.iso"}, ConfigDrive: driveContent()}
	_, err = p.Provision(context.Background(), h)
	if !errors.Is(err, errclass.ErrUnsupported) || !strings.Contains(err.Error(), "--artifact-addr") {
		t.Fatalf("err = %v, want ErrUnsupported naming --artifact-addr", err)
	}
	for _, m := range sim.State(0).VirtualMedia {
		if m.Inserted {
			t.Fatalf("%s inserted after the refusal", m.Path)
		}
	}
}

// With the image cache on, the BMC gets the rack's URL of the image; an
// image whose checksum does not match fails the host and nothing is
// inserted.
func TestImageFromRackCache(t *testing.T) {
	body := []byte(strings.Repeat("live iso ", 100000))
	sum := sha256.Sum256(body)
	var gets atomic.Int64
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		http.ServeContent(w, r, "live.iso", time.Unix(0, 0), strings.NewReader(string(body)))
	}))
	defer origin.Close()
	sim, err := bmcsim.Start(bmcsim.Config{Hosts: 2, FetchMedia: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	art := startArtifacts(t, t.TempDir())
	p := newDirect(t, art)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	bad := provisioner.Host{Name: "h1", Username: "admin", Password: "password", Online: true, BMC: wire.BMC{Address: sim.Address(1)},
		Image: &wire.Image{URL: origin.URL + "/live.iso", Checksum: strings.Repeat("0", 64)}}
	_, err = p.Provision(ctx, bad)
	if !errors.Is(err, errclass.ErrFailed) || !strings.Contains(err.Error(), hex.EncodeToString(sum[:])) || !strings.Contains(err.Error(), origin.URL+"/live.iso") {
		t.Fatalf("mismatch: %v; want ErrFailed with the actual digest and the URL", err)
	}
	if sim.State(1).Media.Inserted || sim.State(1).Power == "On" {
		t.Fatal("a host whose image failed verification was changed")
	}

	h := bad
	h.Name, h.BMC.Address = "h0", sim.Address(0)
	h.Image = &wire.Image{URL: origin.URL + "/live.iso", Checksum: hex.EncodeToString(sum[:]), ChecksumType: wire.ChecksumSHA256}
	res, err := p.Provision(ctx, h)
	if err != nil || res.InProgress {
		t.Fatalf("provision: %v %+v", err, res)
	}
	m := sim.State(0).Media
	if want := art.BaseURL() + "/images/sha256-" + h.Image.Checksum + "/live.iso"; !m.Inserted || m.Image != want {
		t.Fatalf("media %+v, want %s", m, want)
	}
	if vm := sim.State(0).VirtualMedia[0]; vm.Read != bmcsim.FetchMediaBytes || vm.ReadError != "" {
		t.Fatalf("the BMC read %d bytes of the rack's copy (%s), want %d", vm.Read, vm.ReadError, bmcsim.FetchMediaBytes)
	}
	if code, b := fetch(t, m.Image); code != http.StatusOK || string(b) != string(body) {
		t.Fatalf("GET the inserted URL: %d, %d bytes", code, len(b))
	}
	if n := gets.Load(); n != 2 {
		t.Errorf("origin GETs %d, want 2 (the mismatching fetch and the good one)", n)
	}
}

// An image.checksum that is the URL of a checksum file: the cache reads
// the image's line and verifies against it; a checksum file the origin
// does not serve fails the host, naming its URL, and nothing is inserted.
func TestImageChecksumFileFromRackCache(t *testing.T) {
	body := []byte(strings.Repeat("live iso ", 100000))
	sum := sha256.Sum256(body)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/live.iso":
			http.ServeContent(w, r, "live.iso", time.Unix(0, 0), strings.NewReader(string(body)))
		case "/SHA256SUMS":
			_, _ = io.WriteString(w, strings.Repeat("1", 64)+"  other.iso\n"+hex.EncodeToString(sum[:])+" *live.iso\n")
		default:
			http.NotFound(w, r)
		}
	}))
	defer origin.Close()
	sim, err := bmcsim.Start(bmcsim.Config{Hosts: 2, FetchMedia: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	art := startArtifacts(t, t.TempDir())
	p := newDirect(t, art)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	bad := provisioner.Host{Name: "h1", Username: "admin", Password: "password", Online: true, BMC: wire.BMC{Address: sim.Address(1)},
		Image: &wire.Image{URL: origin.URL + "/live.iso", Checksum: origin.URL + "/live.iso.sha256sum"}}
	_, err = p.Provision(ctx, bad)
	if !errors.Is(err, errclass.ErrFailed) || !strings.Contains(err.Error(), origin.URL+"/live.iso.sha256sum") || !strings.Contains(err.Error(), "404") {
		t.Fatalf("missing checksum file: %v; want ErrFailed naming its URL and the 404", err)
	}
	if sim.State(1).Media.Inserted || sim.State(1).Power == "On" {
		t.Fatal("a host whose checksum file is missing was changed")
	}

	h := bad
	h.Name, h.BMC.Address = "h0", sim.Address(0)
	h.Image = &wire.Image{URL: origin.URL + "/live.iso", Checksum: origin.URL + "/SHA256SUMS", ChecksumType: wire.ChecksumSHA256}
	if res, err := p.Provision(ctx, h); err != nil || res.InProgress {
		t.Fatalf("provision: %v %+v", err, res)
	}
	if m, want := sim.State(0).Media, art.BaseURL()+"/images/sha256-"+hex.EncodeToString(sum[:])+"/live.iso"; !m.Inserted || m.Image != want {
		t.Fatalf("media %+v, want %s", m, want)
	}
}
