package bmc

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/stmcginnis/gofish/redfish"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
)

// Redfish power, boot override and BMC reset: always on exactly the system
// discovery chose (the address's system path, or the service's only
// system) and its own manager — never on every system of the service (what
// bmclib's gofish provider does, a fencing hazard on a blade BMC).

// systemEntity is the system discovery chose, read fresh as a gofish
// entity (its ETag and client ready for a guarded mutation). c.mu held.
func (c *Conn) systemEntity(s *rfSession) (*rfDiscovery, *redfish.ComputerSystem, error) {
	d, err := c.discover(s)
	if err != nil {
		return nil, nil, err
	}
	var sys redfish.ComputerSystem
	if err := rfGet(s.api, d.system, &sys); err != nil {
		return nil, nil, err
	}
	return d, &sys, nil
}

// rfPowerState reads the system's PowerState (false when it has none).
func (c *Conn) rfPowerState(ctx context.Context) (bool, error) {
	p, err := c.rfPower(ctx)
	return p == PowerOn, err
}

// rfPower reads the system's PowerState: PowerUnknown when it has none.
func (c *Conn) rfPower(ctx context.Context) (Power, error) {
	var p Power
	err := c.rfCall(ctx, "power get", func(ctx context.Context, s *rfSession) error {
		sys, err := c.powerStateDoc(s)
		if err != nil {
			return err
		}
		if sys.PowerState == "" {
			p = PowerUnknown
			return nil
		}
		on, err := normalisePower(string(sys.PowerState))
		p = powerOf(on)
		return err
	})
	return p, err
}

// powerStateDoc is the system as a power read needs it: the document
// discovery read in this same call, else the system with $select of
// PowerState where the service offers it (a few hundred bytes instead of
// the whole ComputerSystem on every status refresh), else a plain GET.
func (c *Conn) powerStateDoc(s *rfSession) (*rfSystemDoc, error) {
	d, err := c.discover(s)
	if err != nil {
		return nil, err
	}
	if sys := c.freshSys; sys != nil {
		c.freshSys = nil
		return sys, nil
	}
	var sys rfSystemDoc
	if err := c.getSelected(s, d, d.system, []string{"PowerState"}, &sys); err != nil {
		return nil, err
	}
	return &sys, nil
}

// rfSetPower: the Reset action On (ForceOn when the system lists only
// that) or ForceOff, not sent when the system already is in that state
// (several BMCs refuse On on a powered system).
func (c *Conn) rfSetPower(ctx context.Context, g *guard.Guard, host, op string, on bool) (sent bool, err error) {
	err = g.Do(ctx, host, op, c.opts.MutationTimeout, func(ctx context.Context) error {
		return c.rfCall(ctx, op, func(ctx context.Context, s *rfSession) error {
			_, sys, err := c.powerDoc(s)
			if err != nil {
				return err
			}
			want, typ := redfish.OffPowerState, redfish.ForceOffResetType
			if on {
				want, typ = redfish.OnPowerState, redfish.OnResetType
			}
			if sys.PowerState == want {
				return nil
			}
			if types := sys.supported(); on && len(types) > 0 && !slices.Contains(types, typ) &&
				slices.Contains(types, redfish.ForceOnResetType) {
				typ = redfish.ForceOnResetType // a system offering ForceOn but not On
			}
			target, body, err := sys.resetPost(typ)
			if err != nil {
				return err
			}
			sent = true
			return sys.Post(target, body)
		})
	})
	return sent, err
}

// rfSoftPowerOff: ComputerSystem.Reset GracefulShutdown, not sent when the
// system is off or already powering off.
func (c *Conn) rfSoftPowerOff(ctx context.Context, g *guard.Guard, host, op string) error {
	return g.Do(ctx, host, op, c.opts.MutationTimeout, func(ctx context.Context) error {
		return c.rfCall(ctx, op, func(ctx context.Context, s *rfSession) error {
			d, sys, err := c.powerDoc(s)
			if err != nil {
				return err
			}
			if sys.PowerState == redfish.OffPowerState || sys.PowerState == redfish.PoweringOffPowerState {
				return nil
			}
			if types := sys.supported(); len(types) > 0 && !slices.Contains(types, redfish.GracefulShutdownResetType) {
				return fmt.Errorf("%w: %s: %s offers no GracefulShutdown reset (it offers %v): reboot it in mode hard", errclass.ErrUnsupported, c.addr, short(d.system), types)
			}
			target, body, err := sys.resetPost(redfish.GracefulShutdownResetType)
			if err != nil {
				return err
			}
			return sys.Post(target, body)
		})
	})
}

// Redfish BootSourceOverrideTarget of each SetBootDevice device.
var rfBootTargets = map[string]redfish.BootSourceOverrideTarget{
	"pxe": redfish.PxeBootSourceOverrideTarget, "disk": redfish.HddBootSourceOverrideTarget,
	"cdrom": redfish.CdBootSourceOverrideTarget, "bios": redfish.BiosSetupBootSourceOverrideTarget,
	"none": redfish.NoneBootSourceOverrideTarget,
}

// rfSetBootDevice PATCHes the system's Boot override (If-Match with the
// system's ETag): target, Once or Continuous, and UEFI mode only when the
// system offers the property (and UEFI among its allowable values, when it
// lists them).
func (c *Conn) rfSetBootDevice(ctx context.Context, g *guard.Guard, host, op, dev string, persistent bool, mode string) error {
	// A mode the system cannot take is refused before the guard: nothing
	// would be changed.
	if err := c.rfCheckBootMode(ctx, mode); err != nil {
		return err
	}
	return g.Do(ctx, host, op, c.opts.MutationTimeout, func(ctx context.Context) error {
		return c.rfCall(ctx, op, func(ctx context.Context, s *rfSession) error {
			d, sys, err := c.systemEntity(s)
			if err != nil {
				return err
			}
			b := redfish.Boot{BootSourceOverrideTarget: rfBootTargets[dev], BootSourceOverrideEnabled: redfish.OnceBootSourceOverrideEnabled}
			if persistent {
				b.BootSourceOverrideEnabled = redfish.ContinuousBootSourceOverrideEnabled
			}
			switch {
			case mode == BootModeLegacy:
				b.BootSourceOverrideMode = redfish.LegacyBootSourceOverrideMode
			case d.bootModeProp && (len(d.bootModeAllowed) == 0 || slices.Contains(d.bootModeAllowed, "UEFI")):
				b.BootSourceOverrideMode = redfish.UEFIBootSourceOverrideMode
			}
			return sys.SetBoot(b)
		})
	})
}

// rfResetBMC: Manager.Reset GracefulRestart of the system's own manager
// (the first of its Links.ManagedBy); the session is dropped after it.
func (c *Conn) rfResetBMC(ctx context.Context, g *guard.Guard, host string) error {
	return g.Do(ctx, host, "bmc reset", c.opts.MutationTimeout, func(ctx context.Context) error {
		err := c.rfCall(ctx, "bmc reset", func(ctx context.Context, s *rfSession) error {
			d, err := c.discover(s)
			if err != nil {
				return err
			}
			if len(d.managers) == 0 {
				return fmt.Errorf("%w: %s lists no manager (Links.ManagedBy) to reset", errclass.ErrUnsupported, short(d.system))
			}
			var m redfish.Manager
			if err := rfGet(s.api, d.managers[0], &m); err != nil {
				return err
			}
			return m.Reset(redfish.GracefulRestartResetType)
		})
		if err == nil {
			c.mu.Lock()
			c.dropSession()
			c.mu.Unlock()
		}
		return err
	})
}

// rfEnableSecureBoot PATCHes SecureBootEnable true on the system's
// SecureBoot resource (gofish ComputerSystem.SecureBoot) when it is not
// already enabled.
func (c *Conn) rfEnableSecureBoot(ctx context.Context, g *guard.Guard, host string) error {
	const op = "secure boot on"
	return g.Do(ctx, host, op, c.opts.MutationTimeout, func(ctx context.Context) error {
		return c.rfCall(ctx, op, func(ctx context.Context, s *rfSession) error {
			d, sys, err := c.systemEntity(s)
			if err != nil {
				return err
			}
			sb, err := sys.SecureBoot()
			if err != nil {
				return err
			}
			if sb == nil {
				return fmt.Errorf("%w: %s: %s has no SecureBoot resource: bootMode UEFISecureBoot cannot be set through this BMC (use bootMode UEFI)", errclass.ErrUnsupported, c.addr, short(d.system))
			}
			if sb.SecureBootEnable {
				return nil
			}
			sb.SecureBootEnable = true
			return sb.Update()
		})
	})
}

// rfCheckBootMode reads whether the system can take a one-time boot in
// mode (Legacy needs Boot.BootSourceOverrideMode with Legacy among its
// AllowableValues, when it lists them); read-only.
func (c *Conn) rfCheckBootMode(ctx context.Context, mode string) error {
	if mode != BootModeLegacy {
		return nil
	}
	return c.rfCall(ctx, "read boot modes", func(ctx context.Context, s *rfSession) error {
		d, err := c.discover(s)
		if err != nil {
			return err
		}
		switch {
		case !d.bootModeProp:
			return fmt.Errorf("%w: %s: %s has no Boot.BootSourceOverrideMode: cannot boot it in legacy (BIOS) mode", errclass.ErrUnsupported, c.addr, short(d.system))
		case len(d.bootModeAllowed) > 0 && !slices.Contains(d.bootModeAllowed, BootModeLegacy):
			return fmt.Errorf("%w: %s: %s offers boot modes %s, not Legacy: set bootMode UEFI", errclass.ErrUnsupported, c.addr, short(d.system), strings.Join(d.bootModeAllowed, ", "))
		}
		return nil
	})
}
