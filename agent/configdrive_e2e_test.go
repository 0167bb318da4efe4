package agent_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestConfigDriveReadProcess: rackfence-agent with an artifact server
// provisions two hosts with user data on BMCs that fetch their media. The
// one whose BMC reads its config drive ends provisioned/ok with the drive's
// artifact server, size and read time in its status, and rackfencectl host get shows them;
// the one whose BMC cannot fetch media (the simulator's mediaReadFails)
// fails provisioning naming the drive, and never reads provisioned/ok.
func TestConfigDriveReadProcess(t *testing.T) {
	testenv.SkipShort(t)
	iso := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "os.iso", time.Unix(0, 0), strings.NewReader(strings.Repeat("iso", 1<<16)))
	}))
	defer iso.Close()
	ctlBin := testenv.Binary(t, "rackfencectl")
	e := newEnv(t, envOpts{bmcs: 2, simArgs: []string{"--profile", "ilo", "--fetch-media"}})
	e.s.SetKnobs(1, `{"mediaReadFails": true}`)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := e.c.Admin.SetCredentials(ctx, "ud", wire.Credentials{Data: map[string]string{"userData": "#cloud-config\nhostname: web\n"}}); err != nil {
		t.Fatal(err)
	}
	for i, n := range []string{"web", "dark"} {
		h := e.hostSpec(n, "r1", i)
		h.Image = &wire.Image{URL: iso.URL + "/os.iso", Format: wire.FormatLiveISO}
		h.UserData = &wire.SecretReference{Name: "ud"}
		e.apply(h)
	}
	art := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, "127.0.0.1"))
	e.startAgent("r1", "a1", "--artifact-addr", art, "--config-drive-read-timeout", "2s", "--error-backoff-base", "1h")

	web := e.waitHost("web", 90*time.Second, "provisioned", stateIs(wire.StateProvisioned, wire.OpOK))
	cd := web.Status.ConfigDrive
	if cd == nil || cd.Size <= 0 || cd.PublishedAt.IsZero() || cd.ReadAt.IsZero() {
		t.Fatalf("web's config drive status %+v; want size, publishedAt, readAt", cd)
	}
	out, err := exec.Command(ctlBin, "--coordinator", e.url, "--token-file", e.adminTokenFile(), "host", "get", "web").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Config drive:") || !strings.Contains(string(out), "read by the BMC "+cd.ReadAt.UTC().Format(time.RFC3339)) {
		t.Fatalf("host get web: %v\n%s", err, out)
	}
	if cd.Server != "http://"+art || !strings.Contains(string(out), "served by http://"+art) {
		t.Errorf("web's config drive server %q, want http://%s, in host get too:\n%s", cd.Server, art, out)
	}
	if strings.Contains(string(out), "/drives/") {
		t.Errorf("host get shows the drive's URL:\n%s", out)
	}

	dark := e.waitHost("dark", 90*time.Second, "provisioning error", func(h *wire.Host) error {
		if h.Status != nil && h.Status.ProvisioningState == wire.StateProvisioned {
			t.Fatalf("dark reads %s/%s though its BMC never read the drive", h.Status.ProvisioningState, h.Status.OperationalStatus)
		}
		if h.Status == nil || h.Status.ErrorType != wire.ErrProvisioning {
			return fmt.Errorf("status %+v", h.Status)
		}
		return nil
	})
	if msg := dark.Status.ErrorMessage; !strings.Contains(msg, "has not read the config drive") || !strings.Contains(msg, "http://"+art) || strings.Contains(msg, "/drives/") {
		t.Errorf("dark's error %q: want the unread drive and the artifact URL, never the drive's URL", msg)
	}
	if cd := dark.Status.ConfigDrive; cd == nil || !cd.ReadAt.IsZero() {
		t.Errorf("dark's config drive %+v: want the unread drive", cd)
	}
}
