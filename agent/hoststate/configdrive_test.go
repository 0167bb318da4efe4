package hoststate

import (
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// The config drive a provision reports goes in the status, unread while
// the BMC has not read it, failed provisioning keeps it; a finished
// deprovision drops it.
func TestConfigDriveInStatus(t *testing.T) {
	h := fullHost()
	h.Image = &wire.Image{URL: "http://i"}
	s := newSim(t, h)
	for i := 0; s.d.Action != ActionProvision; i++ {
		if i > 50 || s.d.Action == ActionNone {
			t.Fatalf("never provisions: %s", s.d)
		}
		s.ok()
	}
	cd := &wire.ConfigDriveStatus{Size: 4096, PublishedAt: t0}
	s.step(&Outcome{Action: ActionProvision, InProgress: true, ConfigDrive: cd})
	if s.d.Status.ProvisioningState != wire.StateProvisioning {
		t.Fatalf("in progress: %s", s.d)
	}
	if got := s.d.Status.ConfigDrive; got == nil || *got != *cd {
		t.Fatalf("in progress: config drive %+v, want %+v", got, cd)
	}
	s.step(&Outcome{Action: ActionProvision, Err: ErrClassFailed, Message: "its BMC has not read the config drive", ConfigDrive: cd})
	if st := s.d.Status; st.ErrorType != wire.ErrProvisioning || st.ConfigDrive == nil || !st.ConfigDrive.ReadAt.IsZero() {
		t.Fatalf("failed: %+v", st)
	}
	read := &wire.ConfigDriveStatus{Size: 4096, PublishedAt: t0, ReadAt: t0.Add(time.Second)}
	s.now = s.now.Add(time.Hour)
	for i := 0; s.d.Action != ActionProvision; i++ {
		if i > 5 {
			t.Fatalf("never retries: %s", s.d)
		}
		s.step(nil)
	}
	s.step(&Outcome{Action: ActionProvision, ConfigDrive: read})
	s.settle()
	s.expect(ActionNone, wire.StateProvisioned)
	if got := s.d.Status.ConfigDrive; got == nil || *got != *read {
		t.Fatalf("provisioned: config drive %+v, want %+v", got, read)
	}
	s.edit(func(h *wire.Host) { h.Image = nil })
	s.settle()
	if s.d.Status.ConfigDrive != nil {
		t.Fatalf("after deprovision: config drive %+v, want none", s.d.Status.ConfigDrive)
	}
}
