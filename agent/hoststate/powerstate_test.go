package hoststate

import (
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// A host whose BMC was never reached shows power unknown, not off; the
// power a registration reads replaces it; a registration that reads none
// (a BMC without a power state) leaves it unknown.
func TestPowerUnknownUntilRead(t *testing.T) {
	s := newSim(t, fullHost())
	s.fail(ErrClassTransient) // the BMC never answered
	if st := s.h.Status; st.PowerState != wire.PowerUnknown || st.PoweredOn {
		t.Fatalf("never reached: powerState %q poweredOn %v; want unknown, false", st.PowerState, st.PoweredOn)
	}
	on := true
	s.step(nil)
	s.step(&Outcome{Action: s.d.Action, PoweredOn: &on})
	if st := s.h.Status; st.PowerState != wire.PowerOn || !st.PoweredOn {
		t.Fatalf("registered, BMC reads on: powerState %q poweredOn %v", st.PowerState, st.PoweredOn)
	}

	s = newSim(t, fullHost())
	s.ok() // registered; the BMC reported no power state
	if st := s.h.Status; st.PowerState != wire.PowerUnknown {
		t.Fatalf("BMC without a power state: powerState %q; want unknown", st.PowerState)
	}
}

// A power change the provisioner did not read back (no power state)
// records what was asked in poweredOn, so the machine does not ask again,
// and powerState unknown; one read back records the read state.
func TestImpliedPowerIsUnknown(t *testing.T) {
	r := newRun(Input{Host: fullHost(), Last: &Outcome{Action: ActionPowerOn}})
	r.powered(true)
	if !r.st.PoweredOn || r.st.PowerState != wire.PowerUnknown {
		t.Fatalf("implied on: poweredOn %v powerState %q", r.st.PoweredOn, r.st.PowerState)
	}
	off := false
	r = newRun(Input{Host: fullHost(), Last: &Outcome{Action: ActionPowerOff, PoweredOn: &off}})
	r.learn(r.in.Last)
	r.powered(false)
	if r.st.PoweredOn || r.st.PowerState != wire.PowerOff {
		t.Fatalf("read off: poweredOn %v powerState %q", r.st.PoweredOn, r.st.PowerState)
	}
}
