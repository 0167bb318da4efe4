package ctl

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

func init() {
	register(&command{
		path:  "credentials rotate",
		usage: "NAME...|--rack R|-l SELECTOR [--yes] [--reason T] [--wait]",
		short: "Rotate the tier's own BMC account on hosts now (on demand)",
		long: `With rackfence-agent --bmc-account-rotation the agent holding a host's rack
rotates the password of the tier's own account on the host's BMC when it
takes the rack over and when the password is older than
--bmc-account-max-age (docs/operator.md, "Fencing and its one limit").
This asks for a rotation now: the request waits on the host
(intents.rotateCredentials) and the rack's lease holder rotates at its
next look at the host, under its current epoch; the request is dropped
when the rotation is confirmed or the fence at the BMC is found off.

Refused (exit 4), saying why and what to do, where no agent would rotate:
the host has no BMC account record (its rack's agent runs without
--bmc-account-rotation, or with --provisioner ironic), the fence at the
BMC is off for it, or it is detached, drained or being deleted.

--wait blocks until every request is answered and shows each host's new
rotation time (epoch and rotatedAt, as 'rackfencectl host bmc-account'
shows them); exit 1 when the fence at the BMC was found off for a host or
--timeout passed (is the rack's agent running?).

` + bulkHelp + `

Examples:
  rackfencectl credentials rotate r1-h07 --wait
  rackfencectl credentials rotate -l role=compute --reason "quarterly" --yes`,
		setup: credentialsRotate,
	})
}

func credentialsRotate(fs *pflag.FlagSet) func(*Ctx, []string) error {
	rack := fs.String("rack", "", "act on every host of this rack")
	reason := fs.String("reason", "", "why (kept with the request and in the host's events)")
	wait := fs.Bool("wait", false, "block until each host's rotation is confirmed, bounded by --timeout")
	pick := addSelection(fs)
	return func(x *Ctx, args []string) error {
		req := wire.BMCAccountRotationRequest{Reason: *reason}
		if err := wire.ValidateBMCAccountRotationRequest(&req); err != nil {
			return usagef("--%v", err)
		}
		names, err := targetNames(args, *rack, *pick.sel)
		if err != nil {
			return err
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		names, before, err := x.resolveTargets(cl, "rotate the BMC account of", names, *rack, pick, false)
		if err != nil {
			return err
		}
		if before == nil {
			before = map[string]*wire.Host{}
		}
		for _, n := range names {
			if before[n] == nil {
				before[n] = &wire.Host{Name: n}
			}
		}
		results, err := x.sendEach(names, before, "rotation of the BMC account requested", func(n string) (any, error) {
			return cl.RotateBMCAccount(x.ctx, n, req.Reason)
		})
		if err != nil || !*wait {
			if err == nil && x.structured() {
				return x.printResults(names, results)
			}
			return err
		}
		return x.waitRotations(cl, names, results)
	}
}

// waitRotations polls each requested host until its request is answered
// (dropped from the host), then reads its BMC account record.
func (x *Ctx) waitRotations(cl *client.Client, names []string, results map[string]any) error {
	ctx := x.ctx
	if x.g.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, x.g.timeout)
		defer cancel()
	}
	w := x.io.Stdout
	if x.structured() {
		w = x.io.Stderr
	}
	start := time.Now()
	final := map[string]any{}
	var failed []string
	for _, n := range names {
		it, ok := results[n].(*wire.Intent)
		if !ok {
			continue
		}
		for {
			h, err := cl.GetHost(ctx, n)
			if err != nil {
				if ctx.Err() != nil {
					return x.rotationTimeout(n, start)
				}
				return notFoundHint(err, n)
			}
			if h.Intents == nil || h.Intents.RotateCredentials == nil || h.Intents.RotateCredentials.CreatedIndex != it.CreatedIndex {
				break
			}
			select {
			case <-ctx.Done():
				return x.rotationTimeout(n, start)
			case <-time.After(time.Second):
			}
		}
		a, err := cl.GetBMCAccount(ctx, n, false, 0)
		if err != nil {
			return notFoundHint(err, n)
		}
		final[n] = a
		if a.State == wire.BMCAccountOff {
			failed = append(failed, n+": the fence at the BMC is off: "+a.Reason)
			continue
		}
		fmt.Fprintf(w, "%s: BMC account %s rotated under epoch %d at %s\n", n, a.Username, a.Epoch, a.RotatedAt.UTC().Format(time.RFC3339))
	}
	if x.structured() {
		if len(names) == 1 {
			_ = x.print(final[names[0]], nil)
		} else {
			_ = x.print(final, nil)
		}
	}
	if len(failed) > 0 {
		return &failure{code: ExitFailed, err: fmt.Errorf("rotation failed for %d of %d host(s):\n  %s", len(failed), len(names), strings.Join(failed, "\n  ")),
			hints: []string{"fix the cause the record names; 'rackfencectl host bmc-account NAME' shows it"}}
	}
	fmt.Fprintf(w, "rotate done: %d host(s) rotated in %s\n", len(final), time.Since(start).Truncate(100*time.Millisecond))
	return nil
}

func (x *Ctx) rotationTimeout(host string, start time.Time) error {
	return &failure{code: ExitFailed, err: fmt.Errorf("host %s: the rotation was not answered within %s", host, time.Since(start).Truncate(time.Second)),
		hints: []string{"is the rack's agent running with --bmc-account-rotation? 'rackfencectl rack leases RACK' shows the holder; the request stays on the host until it is answered"}}
}
