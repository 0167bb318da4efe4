package ctl

import (
	"fmt"
	"sort"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// reboot and inspect: the operation intents.

const rebootWaitRules = `--wait blocks until every host is done, shows progress and ends with the
outcome. Done means: reboot - the agent powered the host off and on again
and dropped the intent; --hold-off - the host is off and the hold is
acknowledged; --release - the hold is gone and the host is on again (or
still held by another requester, or online is false). A host fails when the
agent reports it in error (errorCount >= 1) after the request. Exit 0 when
all are done; 1 when one failed or --timeout passed.`

func init() {
	register(&command{
		path:  "reboot",
		usage: "NAME...|--rack R|-l SELECTOR [--soft] [--hold-off|--release] [--requester KEY] [--yes] [--reason T] [--wait]",
		short: "Reboot hosts, or hold them powered off",
		long: `A reboot powers the host off and on again once, then the intent is dropped:
hard (the default) powers off at once; --soft asks the OS to shut down
(Redfish GracefulShutdown, IPMI soft off, Ironic soft power off) and powers
off hard when it has not after the agent's --soft-power-off-timeout (3m by
default).

--hold-off keeps the host powered off for --requester KEY (default
"default") until that requester runs --release: several requesters each hold
their own, and the host powers on again only when none is left (metal3's
reboot.metal3.io/KEY). --soft applies to the power-off of a hold too.

Refused (exit 4) unless the host is available, provisioned or externally
provisioned, and while it is detached, drained or being deleted; a reboot of
a host with online: false is refused (it stays off).

` + rebootWaitRules + `

` + bulkHelp + `

Examples:
  rackfencectl reboot r1-h07 --wait
  rackfencectl reboot -l role=compute --soft --yes
  rackfencectl reboot r1-h07 --hold-off --requester fw-upgrade --wait
  rackfencectl reboot r1-h07 --release --requester fw-upgrade --wait`,
		setup: rebootCmd,
	})
	register(&command{
		path:  "inspect",
		usage: "NAME...|--rack R|-l SELECTOR [--yes] [--reason T] [--wait]",
		short: "Read the hardware of available hosts again",
		long: `The agent reads the host's hardware again (Ironic: manage, inspect, provide;
direct: the BMC inventory) and updates status.hardwareDetails and
status.operationHistory.inspect. Only an available host can be inspected
again (exit 4 otherwise: deprovision it first).

--wait blocks until the intent is dropped and the host is available again.

` + bulkHelp + `

Examples:
  rackfencectl inspect r1-h07 --wait
  rackfencectl inspect --rack r1 --reason "new DIMMs"`,
		setup: inspectCmd,
	})
}

// opTargets resolves NAME..., --rack and -l to host names (and, for
// --wait, the hosts as they are before the request).
func (x *Ctx) opTargets(cl *client.Client, verb string, args []string, rack string, pick selection) ([]string, map[string]*wire.Host, error) {
	names, err := targetNames(args, rack, *pick.sel)
	if err != nil {
		return nil, nil, err
	}
	return x.resolveTargets(cl, verb, names, rack, pick, true)
}

// resolveTargets is opTargets once targetNames has checked the arguments:
// names are the hosts named, if any. A selection is printed and confirmed
// (verb names the action). fetch: read each named host for before (a rack
// or a selection fills it anyway); without it a named host that does not
// exist is left to the request to refuse.
func (x *Ctx) resolveTargets(cl *client.Client, verb string, names []string, rack string, pick selection, fetch bool) ([]string, map[string]*wire.Host, error) {
	sel := *pick.sel
	before := map[string]*wire.Host{}
	switch {
	case sel != "":
		hs, err := x.selectHosts(cl, rack, sel)
		if err != nil {
			return nil, nil, err
		}
		if err := x.confirm(verb, sel, hs, *pick.yes); err != nil {
			return nil, nil, err
		}
		for i := range hs {
			names = append(names, hs[i].Name)
			before[hs[i].Name] = &hs[i]
		}
	case rack != "":
		l, err := cl.ListHosts(x.ctx, client.HostFilter{Rack: rack})
		if err != nil {
			return nil, nil, err
		}
		for i := range l.Items {
			names = append(names, l.Items[i].Name)
			before[l.Items[i].Name] = &l.Items[i]
		}
		if len(names) == 0 {
			return nil, nil, &failure{code: ExitNotFound, err: fmt.Errorf("rack %q has no hosts", rack), hints: []string{"'rackfencectl rack list' shows the racks"}}
		}
		sort.Strings(names)
	case fetch:
		for _, n := range names {
			h, err := cl.GetHost(x.ctx, n)
			if err != nil {
				return nil, nil, notFoundHint(err, n)
			}
			before[n] = h
		}
	}
	return names, before, nil
}

// sendEach runs send for every name, printing "NAME: what" or the error;
// results (for -o json) and before (for --wait) keep only the hosts that
// took it. When some refused, the error comes with the results of the
// others; when the coordinator is unreachable, with none.
func (x *Ctx) sendEach(names []string, before map[string]*wire.Host, what string, send func(string) (any, error)) (map[string]any, error) {
	results := map[string]any{}
	var firstErr error
	for _, n := range names {
		v, err := send(n)
		if err != nil {
			if client.IsUnreachable(err) {
				return nil, err
			}
			err = x.conflictHint(notFoundHint(err, n), n)
			if firstErr == nil {
				firstErr = err
			}
			if len(names) > 1 {
				// One host: its refusal is the command's error, printed once.
				fmt.Fprintf(x.io.Stderr, "%s: %v\n", n, err)
			}
			delete(before, n)
			continue
		}
		results[n] = v
		if !x.structured() {
			fmt.Fprintf(x.io.Stdout, "%s: %s\n", n, what)
		}
	}
	if firstErr != nil {
		if len(names) == 1 {
			return results, firstErr
		}
		return results, withHints(fmt.Errorf("%d of %d hosts refused; first error: %w", len(names)-len(results), len(names), firstErr))
	}
	return results, nil
}

// finishOp prints the results (-o json|yaml without --wait) or waits.
func (x *Ctx) finishOp(cl *client.Client, g goal, wait bool, names []string, results map[string]any, before map[string]*wire.Host, rack string) error {
	if wait {
		if rack != "" && len(before) != len(names) {
			rack = "" // some were refused: fetch the others one by one
		}
		return x.wait(cl, g, before, rack)
	}
	if !x.structured() {
		return nil
	}
	return x.printResults(names, results)
}

// printResults prints what each host took (one host: its result alone).
func (x *Ctx) printResults(names []string, results map[string]any) error {
	var v any = results
	if len(names) == 1 {
		v = results[names[0]]
	}
	return x.print(v, nil)
}

func rebootCmd(fs *pflag.FlagSet) func(*Ctx, []string) error {
	rack := fs.String("rack", "", "act on every host of this rack")
	soft := fs.Bool("soft", false, "graceful shutdown first (hard power-off after the agent's --soft-power-off-timeout)")
	hold := fs.Bool("hold-off", false, "keep the hosts powered off until --release by the same --requester")
	release := fs.Bool("release", false, "withdraw --requester's power-off hold (the host powers on when no hold is left)")
	requester := fs.String("requester", "", `who holds the power-off (with --hold-off or --release; default "default")`)
	reason := fs.String("reason", "", "why (kept with the intent)")
	wait := fs.Bool("wait", false, "block until done (see below), bounded by --timeout")
	pick := addSelection(fs)
	return func(x *Ctx, args []string) error {
		switch {
		case *hold && *release:
			return usagef("--hold-off and --release exclude each other")
		case *requester != "" && !*hold && !*release:
			return usagef("--requester goes with --hold-off or --release (a plain reboot is not held by anyone)")
		case *release && (*soft || *reason != ""):
			return usagef("--release takes only --requester (and --wait)")
		}
		req := wire.RebootRequest{Mode: wire.RebootHard, PowerOff: *hold, Requester: *requester, Reason: *reason}
		if *soft {
			req.Mode = wire.RebootSoft
		}
		if *release && req.Requester == "" {
			req.Requester = wire.DefaultRequester
		}
		if err := wire.ValidateReboot(&req); err != nil {
			return usagef("--%v", err)
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		names, before, err := x.opTargets(cl, "reboot", args, *rack, pick)
		if err != nil {
			return err
		}
		g, what := goalRebooted, "reboot ("+req.Mode+") requested"
		send := func(n string) (any, error) { return cl.Reboot(x.ctx, n, req) }
		switch {
		case *hold:
			g, what = goalHeldOff, fmt.Sprintf("power-off (%s) held by %s", req.Mode, req.Requester)
		case *release:
			g, what = goalReleased, "power-off hold of "+req.Requester+" withdrawn"
			send = func(n string) (any, error) { return cl.ReleasePowerOff(x.ctx, n, req.Requester) }
		}
		x.waitRequester = req.Requester
		results, err := x.sendEach(names, before, what, send)
		if err != nil {
			return err
		}
		return x.finishOp(cl, g, *wait, names, results, before, *rack)
	}
}

func inspectCmd(fs *pflag.FlagSet) func(*Ctx, []string) error {
	rack := fs.String("rack", "", "act on every host of this rack")
	reason := fs.String("reason", "", "why (kept with the intent)")
	wait := fs.Bool("wait", false, "block until the hardware was read again, bounded by --timeout")
	pick := addSelection(fs)
	return func(x *Ctx, args []string) error {
		req := wire.IntentRequest{Reason: *reason}
		if err := wire.ValidateInspect(&req); err != nil {
			return usagef("--%v", err)
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		names, before, err := x.opTargets(cl, "inspect", args, *rack, pick)
		if err != nil {
			return err
		}
		results, err := x.sendEach(names, before, "inspect requested", func(n string) (any, error) {
			return cl.Inspect(x.ctx, n, req)
		})
		if err != nil {
			return err
		}
		return x.finishOp(cl, goalInspected, *wait, names, results, before, *rack)
	}
}

// judgeOperation is judge for the goals of reboot and inspect.
func (p *hostProgress) judgeOperation(g goal, h *wire.Host, in *wire.Intents) {
	s := h.Status
	switch g {
	case goalRebooted:
		p.done = in.Reboot == nil && s != nil
	case goalInspected:
		p.done = in.Inspect == nil && s != nil && s.ProvisioningState == wire.StateAvailable && restful(s.OperationalStatus)
	case goalServiced:
		p.done = in.Service == nil && s != nil && restful(s.OperationalStatus) &&
			(s.ProvisioningState == wire.StateProvisioned || s.ProvisioningState == wire.StateExternallyProvisioned)
		if in.Service == nil && s != nil && !p.done && s.ProvisioningState != wire.StateServicing &&
			s.ProvisioningState != wire.StateProvisioned && s.ProvisioningState != wire.StateExternallyProvisioned {
			p.failed = "the service intent was dropped: the host is " + s.ProvisioningState
		}
	case goalHeldOff:
		it := in.PowerOff[p.requester]
		p.done = it != nil && it.Acknowledged
		if it == nil {
			p.failed = "the power-off hold of " + p.requester + " was withdrawn (released by someone else)"
		}
	case goalReleased:
		p.done = in.PowerOff[p.requester] == nil && s != nil && (s.PoweredOn || len(in.PowerOff) > 0 || !h.Online)
	}
}
