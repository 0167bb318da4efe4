package ctl

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

func init() {
	register(&command{
		path:  "detach",
		usage: "NAME...|--rack R|-l SELECTOR [--yes] [--reason T] [--force] [--wait]",
		short: "Stop managing hosts without deprovisioning them",
		long: `The rack's lease holder stops every action on the host and acknowledges;
the host keeps running, nothing is deprovisioned (with --provisioner ironic
its Ironic node is removed without deprovisioning).
A detach is honoured in provisioned, externally-provisioned and available;
in other states it waits, unless --force. 'attach' undoes it.

` + waitRules + `

` + bulkHelp + `

Examples:
  rackfencectl detach r1-h07 --reason "move to site B" --wait
  rackfencectl detach --rack r1 --wait
  rackfencectl detach -l role=compute,zone=a --yes`,
		setup: intentCmd(wire.IntentDetach, true),
	})
	register(&command{
		path:  "attach",
		usage: "NAME...|--rack R|-l SELECTOR [--yes] [--wait]",
		short: "Return detached hosts to management (re-register and adopt)",
		long:  "Withdraws the detach intent; the host is registered again and adopted\nwithout redeploying it.\n\n" + waitRules + "\n\n" + bulkHelp,
		setup: intentCmd("attach", false),
	})
	register(&command{
		path:  "resume",
		usage: "NAME...|-l SELECTOR [--yes] [--reason T]",
		short: "Retry a host in error now (resets its error backoff)",
		long:  "One-shot: the host's errorCount is set to 1 and it is reconciled at once.\nOn a host without an error the intent is dropped with an event.\n\n" + bulkHelp,
		setup: intentCmd(wire.IntentResume, true),
	})
	register(&command{
		path:  "drain",
		usage: "NAME...|--rack R|-l SELECTOR --mode removal|maintenance [--yes] [--force] [--reason T] [--wait]",
		short: "Take hosts out for maintenance, or remove them for good",
		long: `Both modes wait until the host has no consumer (or --force), then stop
managing it. maintenance keeps the record ('restore' returns the host);
removal makes the rack agent forget the host (with --provisioner ironic it
also removes its Ironic node) and deletes the record; a removal can be
cancelled with 'restore' until the agent has forgotten the host.

` + waitRules + "\n\n" + bulkHelp,
		setup: intentCmd(wire.IntentDrain, true),
	})
	register(&command{
		path:  "restore",
		usage: "NAME...|--rack R|-l SELECTOR [--yes] [--wait]",
		short: "Withdraw a drain: return hosts from maintenance",
		long:  "A removal past its point of no return (the rack agent forgot the host; with\n--provisioner ironic, its Ironic node is gone) is refused (exit 4).\n\n" + waitRules + "\n\n" + bulkHelp,
		setup: intentCmd("restore", false),
	})
}

// intentCmd builds detach, attach, resume, drain and restore. post says
// whether it creates an intent (POST) or withdraws one (DELETE).
func intentCmd(kind string, post bool) func(fs *pflag.FlagSet) func(*Ctx, []string) error {
	return func(fs *pflag.FlagSet) func(*Ctx, []string) error {
		var rack, reason, mode *string
		var force, wait *bool
		if kind != wire.IntentResume {
			rack = fs.String("rack", "", "act on every host of this rack")
			wait = fs.Bool("wait", false, "block until done (see below), bounded by --timeout")
		}
		if post {
			reason = fs.String("reason", "", "why (kept with the intent and in events)")
		}
		if kind == wire.IntentDrain {
			mode = fs.String("mode", "", "removal or maintenance (required)")
		}
		if kind == wire.IntentDetach || kind == wire.IntentDrain {
			force = fs.Bool("force", false, "do not wait for the host to reach a stable state or lose its consumer")
		}
		pick := addSelection(fs)
		return func(x *Ctx, args []string) error {
			req := wire.IntentRequest{}
			if reason != nil {
				req.Reason = *reason
			}
			if force != nil {
				req.Force = *force
			}
			if mode != nil {
				req.Mode = *mode
			}
			if post {
				if err := wire.ValidateIntent(kind, &req); err != nil {
					return usagef("--%v", err)
				}
			}
			r := ""
			if rack != nil {
				r = *rack
			}
			names, err := targetNames(args, r, *pick.sel)
			if err != nil {
				return err
			}
			cl, err := x.Client()
			if err != nil {
				return err
			}
			g, waitable := goalFor(kind, req.Mode)
			doWait := wait != nil && *wait && waitable
			names, before, err := x.resolveTargets(cl, kind, names, r, pick, doWait)
			if err != nil {
				return err
			}
			results, err := x.sendEach(names, before, requested(kind, req.Mode), func(n string) (any, error) {
				return sendIntent(x.ctx, cl, kind, n, req)
			})
			switch {
			case results == nil:
				return err // the coordinator is unreachable
			case err != nil:
				// Some refused: -o json|yaml still shows what the others took.
				if post && !doWait && x.structured() {
					if perr := x.printResults(names, results); perr != nil {
						return perr
					}
				}
				return err
			case !post && !doWait:
				return nil // a withdrawal has no result to print
			}
			return x.finishOp(cl, g, doWait, names, results, before, r)
		}
	}
}

// targetNames checks NAME... against --rack and -l: names, or --rack
// and/or -l (both: the hosts of the rack that match).
func targetNames(args []string, rack, sel string) ([]string, error) {
	switch {
	case (rack != "" || sel != "") && len(args) > 0:
		return nil, usagef("give host names, or --rack and/or -l, not both")
	case rack == "" && sel == "" && len(args) == 0:
		return nil, usagef("name at least one host (or --rack R for every host of a rack, or -l SELECTOR for every host whose labels match)")
	case rack != "" || sel != "":
		if rack != "" {
			if err := wire.ValidateName("--rack", rack); err != nil {
				return nil, usagef("%v", err)
			}
		}
		if sel != "" {
			if err := checkSelector(sel); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}
	for _, a := range args {
		if err := wire.ValidateName("NAME", a); err != nil {
			return nil, usagef("%v", err)
		}
	}
	return args, nil
}

func sendIntent(ctx context.Context, cl *client.Client, kind, name string, req wire.IntentRequest) (*wire.Intent, error) {
	switch kind {
	case wire.IntentDetach:
		return cl.Detach(ctx, name, req)
	case wire.IntentDrain:
		return cl.Drain(ctx, name, req)
	case wire.IntentResume:
		return cl.Resume(ctx, name, req)
	case "attach":
		return nil, cl.Attach(ctx, name)
	case "restore":
		return nil, cl.Restore(ctx, name)
	}
	return nil, fmt.Errorf("unknown intent %q", kind)
}

func goalFor(kind, mode string) (goal, bool) {
	switch kind {
	case wire.IntentDetach:
		return goalDetached, true
	case "attach":
		return goalAttached, true
	case wire.IntentDrain:
		if mode == wire.DrainRemoval {
			return goalRemoved, true
		}
		return goalMaintenance, true
	case "restore":
		return goalRestored, true
	}
	return 0, false
}

func requested(kind, mode string) string {
	switch kind {
	case wire.IntentDrain:
		return "drain (" + mode + ") requested"
	case "attach":
		return "attach requested (detach withdrawn)"
	case "restore":
		return "restore requested (drain withdrawn)"
	}
	return kind + " requested"
}

// conflictHint adds, to a 409 about a host no rack agent has reported yet,
// who holds the host's rack: that agent is the one that registers it. A
// 409 about a reported host is about its state or intents, which the
// message already says; the lease holder has nothing to do with it.
func (x *Ctx) conflictHint(err error, host string) error {
	if !client.IsConflict(err) || x.cl == nil {
		return err
	}
	h, gerr := x.cl.GetHost(x.ctx, host)
	if gerr != nil || (h.Status != nil && h.Status.ProvisioningState != "") {
		return err
	}
	racks, rerr := x.cl.Racks(x.ctx)
	if rerr != nil {
		return err
	}
	for _, r := range racks.Items {
		if r.Name != h.Rack {
			continue
		}
		if r.Holder == "" {
			return withHints(err, fmt.Sprintf("rack %s has no lease holder right now (no agent is running for it)", r.Name))
		}
		return withHints(err, fmt.Sprintf("rack %s is held by %s (lease epoch %d, ttl %s)", r.Name, r.Holder, r.Epoch, r.TTL.D()))
	}
	return err
}
