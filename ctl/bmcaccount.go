package ctl

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/shared/wire"
)

func init() {
	register(&command{
		path:  "host bmc-account",
		usage: "NAME",
		short: "Show the tier's own account on a host's BMC: rotated, pending, or why the fence at the BMC is off (never a password)",
		long: `With rackfence-agent --bmc-account-rotation, the agent holding the
host's rack manages an account of the tier's own on the host's BMC and
rotates its password when the lease moves (docs/operator.md, "Fencing
and its one limit"). This shows the account's name, its state
(confirmed, pending, off), the lease epoch of the last rotation and when
it happened, or why the fence at the BMC is off for the host. Passwords
are never shown.

Example:
  rackfencectl host bmc-account web-0`,
		setup: hostBMCAccount,
	})
}

func hostBMCAccount(fs *pflag.FlagSet) func(*Ctx, []string) error {
	return func(x *Ctx, args []string) error {
		name, err := oneName(args, "host bmc-account NAME")
		if err != nil {
			return err
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		a, err := cl.GetBMCAccount(x.ctx, name, false, 0)
		if err != nil {
			return err
		}
		a.Password, a.PendingPassword = "", ""
		var req *wire.Intent
		if h, err := cl.GetHost(x.ctx, name); err == nil && h.Intents != nil {
			req = h.Intents.RotateCredentials
		}
		return x.print(a, func(w io.Writer) { bmcAccountDetail(w, a, req) })
	}
}

// bmcAccountDetail shows the record and, when one waits, the on-demand
// rotation request (rackfencectl credentials rotate).
func bmcAccountDetail(w io.Writer, a *wire.BMCAccount, req *wire.Intent) {
	k := &kv{}
	k.add("Host", a.Host)
	k.add("Account", dashIfEmpty(a.Username))
	switch a.State {
	case wire.BMCAccountOff:
		k.add("Fence at the BMC", "off: "+a.Reason)
	case wire.BMCAccountPending:
		k.add("Fence at the BMC", fmt.Sprintf("rotating (a new password recorded under epoch %d; the BMC takes it or the previous one)", a.PendingEpoch))
	default:
		k.add("Fence at the BMC", "on")
	}
	if a.Epoch != 0 {
		k.add("Rotated", fmt.Sprintf("under epoch %d at %s", a.Epoch, a.RotatedAt.UTC().Format(time.RFC3339)))
	}
	if req != nil {
		k.add("Rotation requested", fmt.Sprintf("by %s (index %d), waiting for the rack's lease holder", dashIfEmpty(req.Actor), req.CreatedIndex))
	}
	k.add("Password", "(sealed, never shown)")
	k.write(w)
}
