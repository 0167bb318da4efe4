package bmc

import (
	"context"
	"fmt"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
)

// Power is a host's power as its BMC reads it.
type Power string

// Powers: on, off, or unknown (a Redfish system giving no PowerState).
const (
	PowerOn      Power = "on"
	PowerOff     Power = "off"
	PowerUnknown Power = "unknown"
)

// DefaultPowerTimeout bounds the wait for a BMC to read back a power change
// it accepted (Options.PowerTimeout, rackfence-agent --bmc-power-timeout).
// BMCs apply a reset seconds after accepting it (sushy-tools 1–11 s); 60 s
// is Ironic's [conductor]power_state_change_timeout.
const DefaultPowerTimeout = 60 * time.Second

// powerPoll is the longest pause between two reads while waiting for a
// power change.
const powerPoll = time.Second

func powerOf(on bool) Power {
	if on {
		return PowerOn
	}
	return PowerOff
}

// Power reads the host's power: PowerOn (Redfish On or PoweringOff, ipmitool
// "Chassis Power is on"), PowerOff (Off, PoweringOn) or, for a Redfish
// system with no PowerState, PowerUnknown (not an error).
func (c *Conn) Power(ctx context.Context) (Power, error) {
	if c.proto == "redfish" {
		return c.rfPower(ctx)
	}
	on, err := c.PowerState(ctx)
	if err != nil {
		return "", err
	}
	return powerOf(on), nil
}

// SetPowerRead powers the host on or off like SetPower and returns the
// power the BMC read back: it waits, reading the power at most every
// second, until the BMC reads the new state, for at most
// Options.PowerTimeout (ErrPowerNotConfirmed then). A system with no
// PowerState cannot confirm anything: PowerUnknown, no error.
func (c *Conn) SetPowerRead(ctx context.Context, g *guard.Guard, host string, on bool) (Power, error) {
	sent, err := c.setPower(ctx, g, host, on)
	if err != nil {
		return "", err
	}
	want := powerOf(on)
	if !sent {
		return want, nil // read in that state just before
	}
	return c.confirmPower(ctx, want)
}

// confirmPower reads the power until it is want (or unknown), at most
// Options.PowerTimeout.
func (c *Conn) confirmPower(ctx context.Context, want Power) (Power, error) {
	timeout := c.opts.PowerTimeout
	pause := min(powerPoll, max(timeout/10, 10*time.Millisecond))
	deadline := time.Now().Add(timeout)
	for {
		got, err := c.Power(ctx)
		if err == nil && (got == want || got == PowerUnknown) {
			return got, nil
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("%w: %s: waiting for the BMC to read power %s: %v", errclass.ErrTransient, c.addr, want, ctx.Err())
		}
		if !time.Now().Before(deadline) {
			last := "power " + string(got)
			if err != nil {
				last = "an error: " + err.Error()
			}
			return got, fmt.Errorf("%w: %s accepted power %s but still read %s after %s: check the host at its BMC, or raise --bmc-power-timeout for a BMC that applies power changes slowly",
				ErrPowerNotConfirmed, c.addr, want, last, timeout)
		}
		t := time.NewTimer(min(pause, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}
