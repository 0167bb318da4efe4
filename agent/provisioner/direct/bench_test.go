package direct_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// BenchmarkProvisionWithConfigDrive is the figure of provisioning one host
// end to end with the direct provisioner, an image through the rack's
// cache and a config drive, on the simulator (iLO profile: CD and a
// Floppy/USBStick device): Provision (drive built and published, both
// media inserted and read back, one-time boot, power on), the BMC's reads
// of the drive and the image from the artifact server, then Deprovision
// (both ejected, drive removed). The 16 MiB image is fetched from its
// origin on the first iteration only. Sub-benchmarks: BMC latency 0 and
// 100 ms per Redfish request (a real BMC's order of magnitude).
//
//	go test -run XXX -bench ProvisionWithConfigDrive ./agent/provisioner/direct
func BenchmarkProvisionWithConfigDrive(b *testing.B) {
	body := strings.Repeat("live iso ", 16<<20/9)
	sum := sha256.Sum256([]byte(body))
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "live.iso", time.Unix(0, 0), strings.NewReader(body))
	}))
	defer origin.Close()
	for _, lat := range []time.Duration{0, 100 * time.Millisecond} {
		b.Run("latency="+lat.String(), func(b *testing.B) {
			sim, err := bmcsim.Start(bmcsim.Config{Hosts: 1, Profile: "ilo", Latency: lat, FetchMedia: true})
			if err != nil {
				b.Fatal(err)
			}
			defer sim.Close()
			art := startArtifacts(b, b.TempDir())
			p := newDirect(b, art)
			h := provisioner.Host{Name: "bench", Username: "admin", Password: "password", Online: true,
				BMC: wire.BMC{Address: sim.Address(0)}, ConfigDrive: driveContent(),
				Image: &wire.Image{URL: origin.URL + "/live.iso", Checksum: hex.EncodeToString(sum[:]), Format: wire.FormatLiveISO}}
			ctx := context.Background()
			for b.Loop() {
				if res, err := p.Provision(ctx, h); err != nil || res.InProgress {
					b.Fatalf("provision: %v %+v (the BMC reads both media as it accepts them)", err, res)
				}
				for _, m := range sim.State(0).VirtualMedia {
					if !m.Inserted {
						b.Fatalf("%s not inserted", m.Path)
					}
					resp, err := http.Get(m.Image)
					if err != nil {
						b.Fatal(err)
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						b.Fatalf("GET %s: %s", m.Image, resp.Status)
					}
				}
				if _, err := p.Deprovision(ctx, h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
