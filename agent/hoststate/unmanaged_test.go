package hoststate

import (
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

func TestUnmanaged(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(h *wire.Host)
	}{
		{"plain", func(h *wire.Host) {}},
		{"externally provisioned", func(h *wire.Host) { h.ExternallyProvisioned = true }},
		{"online with image", func(h *wire.Host) { h.Image = &wire.Image{URL: "http://i"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := fullHost()
			h.BMC = wire.BMC{}
			tc.mod(&h)
			s := newSim(t, h)
			s.expect(ActionNone, wire.StateUnmanaged)
			if s.d.Status.OperationalStatus != wire.OpDiscovered || !s.d.Blocked {
				t.Fatalf("want discovered and blocked: %s", s.d)
			}
			// Stepping again changes nothing.
			d := s.step(nil)
			if d.Action != ActionNone || len(d.Events) != 0 || d.Status.ProvisioningState != wire.StateUnmanaged {
				t.Fatalf("unmanaged host acted again: %s %v", d, d.Events)
			}
		})
	}
}

func TestUnmanagedGetsDetails(t *testing.T) {
	h := fullHost()
	h.BMC = wire.BMC{}
	s := newSim(t, h)
	s.expect(ActionNone, wire.StateUnmanaged)
	s.edit(func(h *wire.Host) { h.BMC = fullHost().BMC })
	s.expect(ActionRegister, wire.StateRegistering)
	if s.d.Blocked {
		t.Fatalf("registering host must not be blocked: %s", s.d)
	}
}

func TestPartialBMCDetails(t *testing.T) {
	for _, tc := range []struct {
		name, field string
		bmc         wire.BMC
	}{
		{"address only", "bmc.credentials", wire.BMC{Address: "ipmi://10.0.0.1:623"}},
		{"credentials only", "bmc.address", wire.BMC{Credentials: "c"}},
		{"bad scheme", "bmc.address", wire.BMC{Address: "ftp://x", Credentials: "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := fullHost()
			h.BMC = tc.bmc
			s := newSim(t, h)
			s.expect(ActionNone, wire.StateRegistering)
			st := s.d.Status
			if st.ErrorType != wire.ErrRegistration || !strings.Contains(st.ErrorMessage, tc.field) || st.ErrorCount != 1 || st.OperationalStatus != wire.OpError {
				t.Fatalf("want registration error naming %s: %+v", tc.field, st)
			}
			// The same spec again: nothing new, the count does not grow.
			d := s.step(nil)
			if d.Status.ErrorCount != 1 || len(d.Events) != 0 {
				t.Fatalf("condition error counted twice: %+v %v", d.Status, d.Events)
			}
			// Fixing the details registers at once, despite the backoff.
			s.edit(func(h *wire.Host) { h.BMC = fullHost().BMC })
			s.expect(ActionRegister, wire.StateRegistering)
			s.ok()
			if s.d.Status.ErrorCount != 0 || s.d.Status.OperationalStatus != wire.OpOK {
				t.Fatalf("success must clear the error: %s", s.d)
			}
		})
	}
}

func TestBMCDetailsRemovedAfterRegistration(t *testing.T) {
	s := newSim(t, fullHost())
	s.settle()
	s.expect(ActionNone, wire.StateAvailable)
	s.edit(func(h *wire.Host) { h.BMC = wire.BMC{} })
	s.expect(ActionNone, wire.StateAvailable)
	if s.d.Status.ErrorType != wire.ErrRegistration || s.d.Status.OperationalStatus != wire.OpError {
		t.Fatalf("want registration error, not unmanaged: %s", s.d)
	}
	// Online change: nothing can be done without details.
	s.edit(func(h *wire.Host) { h.Online = false })
	s.expect(ActionNone, wire.StateAvailable)
	// Restored: power is asserted at once.
	s.edit(func(h *wire.Host) { h.BMC = fullHost().BMC })
	s.expect(ActionPowerOff, wire.StateAvailable)
	s.ok()
	if s.d.Status.ErrorType != "" {
		t.Fatalf("error not cleared: %s", s.d)
	}
}

func TestBMCDetailsRemovedWhileProvisioned(t *testing.T) {
	h := fullHost()
	h.Image = &wire.Image{URL: "http://i"}
	s := newSim(t, h)
	s.settle()
	s.expect(ActionNone, wire.StateProvisioned)
	s.edit(func(h *wire.Host) { h.BMC.Credentials = "" })
	if s.d.Status.ErrorType != wire.ErrProvisionedRegistration {
		t.Fatalf("want provisioned registration error: %s", s.d)
	}
}

func TestDeleteUnmanaged(t *testing.T) {
	h := fullHost()
	h.BMC = wire.BMC{}
	s := newSim(t, h)
	s.h.DeletionRequested = true
	d := s.step(nil)
	if !d.Remove || d.Action != ActionNone || d.Status.ProvisioningState != wire.StateDeleting {
		t.Fatalf("unmanaged host must be removed at once: %s", d)
	}
}
