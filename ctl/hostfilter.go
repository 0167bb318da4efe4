package ctl

import (
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// listStates are the values host list's STATE column shows: every
// provisioning state, plus "pending" (no status reported yet).
var listStates = append(slices.Clone(wire.ProvisioningStates), "pending")

// listStatuses are the values of the STATUS column.
var listStatuses = []string{wire.OpOK, wire.OpDiscovered, wire.OpError, wire.OpDelayed, wire.OpDetached,
	wire.OpMaintenance, wire.OpRemoving, wire.OpAwaitingHandoff}

// listErrors are the error types of the ERROR column.
var listErrors = []string{wire.ErrRegistration, wire.ErrInspection, wire.ErrProvisioning, wire.ErrDeprovisioning,
	wire.ErrPowerManagement, wire.ErrDetach, wire.ErrProvisionedRegistration}

// listFilter is host list's filters on what the table shows. The
// coordinator filters by rack, selector and provisioning state; the rest
// (status, error, unacknowledged intents, and the states that are no
// provisioning state) are matched here, on the same values the columns
// print.
type listFilter struct {
	state, status, errType string
	pending                bool
	// health: a hardware health (OK, Warning, Critical, Unknown), or
	// "unhealthy" (any but OK, read).
	health string
}

// listHealths are --health's values.
var listHealths = append(slices.Clone(wire.HardwareHealths), "unhealthy")

func listFilterFlags(fs *pflag.FlagSet) *listFilter {
	f := &listFilter{}
	fs.StringVar(&f.state, "state", "", "only hosts in this STATE ("+strings.Join(listStates, ", ")+")")
	fs.StringVar(&f.status, "status", "", "only hosts with this STATUS ("+strings.Join(listStatuses, ", ")+")")
	fs.StringVar(&f.errType, "error", "", "only hosts with this ERROR type (\"any\" for every host in error; "+strings.Join(listErrors, ", ")+")")
	fs.StringVar(&f.health, "health", "", "only hosts whose BMC reports this hardware health ("+strings.Join(listHealths, ", ")+"; unhealthy: anything but OK)")
	fs.BoolVar(&f.pending, "intents-pending", false, "only hosts with an intent the lease holder has not acknowledged (a * in INTENTS)")
	return f
}

// check refuses a value no column shows, naming the flag that filters it
// when the value belongs to another column.
func (f *listFilter) check() error {
	one := func(flag, v string, allowed []string) error {
		if v == "" || slices.Contains(allowed, v) {
			return nil
		}
		for _, o := range []struct {
			flag    string
			allowed []string
		}{{"--state", listStates}, {"--status", listStatuses}, {"--error", listErrors}} {
			if o.flag != flag && slices.Contains(o.allowed, v) {
				return usagef("%s %q is not a %s value; %q is filtered with %s %s", flag, v, strings.TrimPrefix(flag, "--"), v, o.flag, v)
			}
		}
		return usagef("%s %q: use one of %s", flag, v, strings.Join(allowed, ", "))
	}
	if err := one("--state", f.state, listStates); err != nil {
		return err
	}
	if err := one("--status", f.status, listStatuses); err != nil {
		return err
	}
	if f.health != "" && !slices.Contains(listHealths, f.health) {
		return usagef("--health %q: use one of %s", f.health, strings.Join(listHealths, ", "))
	}
	if f.errType == "any" {
		return nil
	}
	return one("--error", f.errType, listErrors)
}

// apply sets the coordinator-side part of the filter. "deleting" is also
// shown for a host deleted before any report (no status), which the
// coordinator's state filter would miss, so it is matched here.
func (f *listFilter) apply(hf *client.HostFilter) {
	if f.state != wire.StateDeleting && slices.Contains(wire.ProvisioningStates, f.state) {
		hf.State = f.state
	}
}

// match is the client-side part: the host's cells against the flags.
func (f *listFilter) match(h *wire.Host) bool {
	if f.state != "" && hostState(h) != f.state {
		return false
	}
	if f.status != "" && hostOpStatus(h) != f.status {
		return false
	}
	if f.errType != "" {
		et := ""
		if h.Status != nil {
			et = h.Status.ErrorType
		}
		if et == "" || (f.errType != "any" && et != f.errType) {
			return false
		}
	}
	if f.health != "" {
		hh := hostHealth(h)
		if hh == "" || (f.health == "unhealthy" && hh == wire.HardwareOK) || (f.health != "unhealthy" && hh != f.health) {
			return false
		}
	}
	if f.pending {
		if _, p := hostIntents(h); !p {
			return false
		}
	}
	return true
}

// keep drops the hosts the filter does not match, in place.
func (f *listFilter) keep(hs []wire.Host) []wire.Host {
	return slices.DeleteFunc(hs, func(h wire.Host) bool { return !f.match(&h) })
}
