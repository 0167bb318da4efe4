package ctl

import (
	"context"
	"fmt"
	"sort"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

func init() {
	register(&command{
		path:  "detach",
		usage: "NAME...|--rack R|-l SELECTOR [--yes] [--reason T] [--force] [--wait]",
		short: "Stop managing hosts without deprovisioning them",
		long: `The rack's lease holder stops every action on the host (its Ironic node is
removed without deprovisioning) and acknowledges; the host keeps running.
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
removal removes it from Ironic and deletes the record; a removal can be
cancelled with 'restore' until the Ironic node is gone.

` + waitRules + "\n\n" + bulkHelp,
		setup: intentCmd(wire.IntentDrain, true),
	})
	register(&command{
		path:  "restore",
		usage: "NAME...|--rack R|-l SELECTOR [--yes] [--wait]",
		short: "Withdraw a drain: return hosts from maintenance",
		long:  "A removal past its point of no return (Ironic node gone) is refused (exit 4).\n\n" + waitRules + "\n\n" + bulkHelp,
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
			sel := *pick.sel
			names, err := targetNames(args, r, sel)
			if err != nil {
				return err
			}
			cl, err := x.Client()
			if err != nil {
				return err
			}
			var selected []wire.Host
			if sel != "" {
				if selected, err = x.selectHosts(cl, r, sel); err != nil {
					return err
				}
				if err := x.confirm(kind, sel, selected, *pick.yes); err != nil {
					return err
				}
				for _, h := range selected {
					names = append(names, h.Name)
				}
			} else if r != "" {
				l, err := cl.ListHosts(x.ctx, client.HostFilter{Rack: r})
				if err != nil {
					return err
				}
				for _, h := range l.Items {
					names = append(names, h.Name)
				}
				if len(names) == 0 {
					return &failure{code: ExitNotFound, err: fmt.Errorf("rack %q has no hosts", r), hints: []string{"'rackfencectl rack list' shows the racks"}}
				}
				sort.Strings(names)
			}
			g, waitable := goalFor(kind, req.Mode)
			doWait := wait != nil && *wait && waitable
			before := map[string]*wire.Host{}
			if doWait && sel != "" {
				for i := range selected {
					before[selected[i].Name] = &selected[i]
				}
			} else if doWait && r == "" {
				for _, n := range names {
					h, err := cl.GetHost(x.ctx, n)
					if err != nil {
						return notFoundHint(err, n)
					}
					before[n] = h
				}
			} else if doWait {
				l, err := cl.ListHosts(x.ctx, client.HostFilter{Rack: r})
				if err != nil {
					return err
				}
				for i := range l.Items {
					before[l.Items[i].Name] = &l.Items[i]
				}
			}
			results := map[string]*wire.Intent{}
			var firstErr error
			okNames := 0
			for _, n := range names {
				in, err := sendIntent(x.ctx, cl, kind, n, req)
				if err != nil {
					if client.IsUnreachable(err) {
						return err
					}
					err = x.conflictHint(notFoundHint(err, n), n)
					if firstErr == nil {
						firstErr = err
					}
					fmt.Fprintf(x.io.Stderr, "%s: %v\n", n, err)
					delete(before, n)
					continue
				}
				okNames++
				results[n] = in
				if !x.structured() {
					fmt.Fprintf(x.io.Stdout, "%s: %s\n", n, requested(kind, req.Mode))
				}
			}
			if x.structured() && !doWait && post {
				var v any = results
				if len(names) == 1 {
					v = results[names[0]]
				}
				if err := x.print(v, nil); err != nil {
					return err
				}
			}
			if firstErr != nil {
				if len(names) == 1 {
					return firstErr
				}
				return withHints(fmt.Errorf("%d of %d hosts refused; first error: %w", len(names)-okNames, len(names), firstErr))
			}
			if doWait {
				return x.wait(cl, g, before, r)
			}
			return nil
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

// conflictHint adds, to a 409 about a host, who holds the host's rack.
func (x *Ctx) conflictHint(err error, host string) error {
	if !client.IsConflict(err) || x.cl == nil {
		return err
	}
	h, gerr := x.cl.GetHost(x.ctx, host)
	if gerr != nil {
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
