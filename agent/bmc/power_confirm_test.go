package bmc

import (
	"errors"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// A BMC that applies a reset seconds after accepting it (the simulator's
// powerDelaySeconds knob, as sushy-tools does): SetPower returns only once
// the BMC reads the new state back, and fails with ErrPowerNotConfirmed
// (an errclass.ErrFailed) when it does not within PowerTimeout.
func TestSetPowerWaitsForTheBMC(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for delayed power changes")
	}
	sim := startSim(t, bmcsim.Config{Hosts: 2, Knobs: bmcsim.Knobs{PowerDelaySeconds: 1, PowerDelayJitterSeconds: 1}})
	g, _ := leasedGuard(time.Hour, nil)
	ctx := testCtx(t)

	c, err := Dial(ctx, Target{Address: sim.Address(0), Username: "admin", Password: "password"},
		Options{Timeout: 30 * time.Second, PowerTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	for _, on := range []bool{true, false} {
		pw, err := c.SetPowerRead(ctx, g, "h0", on)
		if err != nil {
			t.Fatalf("power %v: %v", on, err)
		}
		want, wantSim := PowerOff, "Off"
		if on {
			want, wantSim = PowerOn, "On"
		}
		if st := sim.State(0).Systems[0].Power; pw != want || st != wantSim {
			t.Fatalf("power %v returned %q while the BMC reads %s; want %q read back", on, pw, st, want)
		}
	}

	// A change the BMC applies after the agent stops waiting.
	if err := sim.SetKnobs(1, bmcsim.Knobs{PowerDelaySeconds: 120}); err != nil {
		t.Fatal(err)
	}
	c2, err := Dial(ctx, Target{Address: sim.Address(1), Username: "admin", Password: "password"},
		Options{Timeout: 30 * time.Second, PowerTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close(ctx)
	err = c2.SetPower(ctx, g, "h1", true)
	if !errors.Is(err, ErrPowerNotConfirmed) || !errors.Is(err, errclass.ErrFailed) {
		t.Fatalf("power on never applied: %v; want ErrPowerNotConfirmed (errclass.ErrFailed)", err)
	}
	t.Logf("error: %v", err)
}

// A system with no PowerState (the no-powerstate profile) reads
// PowerUnknown, not an error; a power change on it is sent and, with
// nothing to read back, answers PowerUnknown at once.
func TestPowerUnknownWithoutPowerState(t *testing.T) {
	sim := startSim(t, bmcsim.Config{Hosts: 1, Profile: "no-powerstate"})
	g, _ := leasedGuard(time.Hour, nil)
	ctx := testCtx(t)
	c, err := Dial(ctx, Target{Address: sim.Address(0), Username: "admin", Password: "password"}, Options{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if pw, err := c.Power(ctx); err != nil || pw != PowerUnknown {
		t.Fatalf("Power = %q, %v; want unknown, no error", pw, err)
	}
	if pw, err := c.SetPowerRead(ctx, g, "h0", true); err != nil || pw != PowerUnknown {
		t.Fatalf("SetPowerRead on = %q, %v; want unknown, no error", pw, err)
	}
	if st := sim.State(0).Systems[0].Power; st != "On" {
		t.Fatalf("the reset was not sent: the BMC's system is %s", st)
	}
}
