package direct_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/agent/provisioner/direct"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// A host whose BMC reads its config drive ends provisioning with the
// drive's size, publication and read in the result (never its URL); one
// whose BMC cannot fetch virtual media (the simulator's mediaReadFails
// knob) stays in progress until the drive-read deadline, then fails
// naming the drive and the artifact server to check.
func TestConfigDriveRead(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a BMC simulator and an artifact server")
	}
	sim, err := bmcsim.Start(bmcsim.Config{Hosts: 2, Profile: "ilo", FetchMedia: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	if err := sim.SetKnobs(1, bmcsim.Knobs{MediaReadFails: true}); err != nil {
		t.Fatal(err)
	}
	iso := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "live.iso", time.Unix(0, 0), strings.NewReader(strings.Repeat("iso", 1<<16)))
	}))
	defer iso.Close()
	art := startArtifacts(t, "")
	fh := fence.NewHolder(nil)
	fh.Set(fence.Lease{Rack: "r1", Holder: "t", Epoch: 7, TTL: time.Hour, Deadline: time.Now().Add(time.Hour)})
	const readTimeout = 300 * time.Millisecond
	newP := func(timeout time.Duration) *direct.Provisioner {
		p, err := direct.New(direct.Config{Guard: guard.NewGuard(fh, nil), Artifacts: art, DriveReadTimeout: timeout,
			BMC: bmc.Options{Timeout: 20 * time.Second, MutationTimeout: 20 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close(context.Background()) })
		return p
	}
	// The BMC that reads gets the default deadline: its read may be noted
	// a moment after the provision that inserted the drive returns.
	p, pRead := newP(readTimeout), newP(0)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	host := func(i int) provisioner.Host {
		return provisioner.Host{Name: []string{"read", "unread"}[i], Username: "admin", Password: "password", Online: true,
			BMC: wire.BMC{Address: sim.Address(i)}, Image: &wire.Image{URL: iso.URL + "/live.iso", Format: wire.FormatLiveISO}, ConfigDrive: driveContent()}
	}

	res, err := pRead.Provision(ctx, host(0))
	for err == nil && res.InProgress && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
		res, err = pRead.Provision(ctx, host(0))
	}
	if err != nil || res.InProgress {
		t.Fatalf("provision of a host whose BMC reads the drive: %v %+v", err, res)
	}
	cd := res.ConfigDrive
	if cd == nil || cd.Size <= 0 || cd.PublishedAt.IsZero() || cd.ReadAt.Before(cd.PublishedAt) || cd.ReadAt.IsZero() {
		t.Fatalf("config drive status %+v; want size, publishedAt and readAt", cd)
	}
	if !strings.Contains(res.Message, "the BMC read the config drive") {
		t.Errorf("message %q does not say the BMC read the drive", res.Message)
	}

	h := host(1)
	start := time.Now()
	res, err = p.Provision(ctx, h)
	if err != nil || !res.InProgress || res.ConfigDrive == nil || !res.ConfigDrive.ReadAt.IsZero() {
		t.Fatalf("first provision of a host whose BMC cannot read the drive: %v %+v; want in progress with the unread drive", err, res)
	}
	if st := sim.State(1); st.Power != "On" || mediaAt(st, "/redfish/v1/Managers/1/VirtualMedia/1").ReadError == "" {
		t.Fatalf("simulator: power %s, media %+v; want on with the drive's read failed", st.Power, st.VirtualMedia)
	}
	for err == nil {
		if ctx.Err() != nil {
			t.Fatal("provisioning never failed for the unread drive")
		}
		if !res.InProgress {
			t.Fatalf("provisioning ended without the BMC reading the drive: %+v", res)
		}
		mut := sim.State(1).Mutations
		time.Sleep(50 * time.Millisecond)
		res, err = p.Provision(ctx, h)
		if err == nil && sim.State(1).Mutations != mut {
			t.Fatalf("waiting for the read changed the BMC %d times", sim.State(1).Mutations-mut)
		}
	}
	if time.Since(start) < readTimeout {
		t.Errorf("failed after %s, before the %s deadline", time.Since(start), readTimeout)
	}
	if !errors.Is(err, errclass.ErrFailed) {
		t.Fatalf("err = %v, want ErrFailed", err)
	}
	for _, want := range []string{"has not read the config drive", art.BaseURL(), "--artifact-url", "--config-drive-read-timeout"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "/drives/") {
		t.Errorf("error %q holds the drive's secret URL", err)
	}
	if res.ConfigDrive == nil || !res.ConfigDrive.ReadAt.IsZero() {
		t.Errorf("failed result's config drive %+v; want the unread drive", res.ConfigDrive)
	}
}
