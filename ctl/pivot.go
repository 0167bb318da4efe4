package ctl

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

func init() {
	register(&command{
		path:  "pivot",
		usage: "NAME...|--rack R|-l SELECTOR --to TIER [--yes] [--delete-source] [--wait]",
		short: "Hand hosts to another tier (site) without redeploying them",
		long: `Runs on the source tier. Each step is idempotent: detach here and wait for
the lease holder's acknowledgement (detaching -> detached), create the host
in TIER as externally provisioned with a handoff record that TIER confirms
with this tier (handed-off), then TIER's agent adopts it (adopted). Without
--wait one step runs per host and the phase is printed; run it again to
continue. With --wait it steps until every host is adopted, or --timeout
(exit 1; run it again later to continue from where it stopped).

TIER must be a --peer-tier of this coordinator, and TIER must hold a
credentials record of the same name as the host's (passwords do not travel).

` + bulkHelp + `

Examples:
  rackfencectl pivot --rack r1 --to site-b --wait
  rackfencectl pivot -l role=compute,zone=a --to site-b --yes`,
		setup: pivotCmd,
	})
}

func pivotCmd(fs *pflag.FlagSet) func(*Ctx, []string) error {
	rack := fs.String("rack", "", "pivot every host of this rack")
	to := fs.String("to", "", "destination tier (a --peer-tier of the coordinator; required)")
	delSource := fs.Bool("delete-source", false, "delete the detached record here once the destination took the host (default: keep it, marked pivotedTo)")
	wait := fs.Bool("wait", false, "step until the destination's agent adopted every host (bounded by --timeout)")
	pick := addSelection(fs)
	return func(x *Ctx, args []string) error {
		names, err := targetNames(args, *rack, *pick.sel)
		if err != nil {
			return err
		}
		if err := wire.ValidateName("--to", *to); err != nil {
			return usagef("%v", err)
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		if *pick.sel != "" {
			hosts, err := x.selectHosts(cl, *rack, *pick.sel)
			if err != nil {
				return err
			}
			if err := x.confirm("pivot", *pick.sel, hosts, *pick.yes); err != nil {
				return err
			}
			for _, h := range hosts {
				names = append(names, h.Name)
			}
		} else if *rack != "" {
			l, err := cl.ListHosts(x.ctx, client.HostFilter{Rack: *rack})
			if err != nil {
				return err
			}
			for _, h := range l.Items {
				names = append(names, h.Name)
			}
			if len(names) == 0 {
				return &failure{code: ExitNotFound, err: fmt.Errorf("rack %q has no hosts", *rack)}
			}
			sort.Strings(names)
		}
		req := wire.PivotRequest{To: *to, DeleteSource: *delSource}
		return x.pivot(cl, names, req, *wait)
	}
}

func (x *Ctx) pivot(cl *client.Client, names []string, req wire.PivotRequest, wait bool) error {
	ctx := x.ctx
	if wait && x.g.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, x.g.timeout)
		defer cancel()
	}
	w := x.io.Stdout
	if x.structured() {
		w = x.io.Stderr
	}
	start := time.Now()
	last := map[string]*wire.PivotProgress{}
	failed := map[string]error{}
	shown := map[string]string{}
	for {
		pending := 0
		for _, n := range names {
			if failed[n] != nil || (last[n] != nil && last[n].Done) {
				continue
			}
			p, err := cl.Pivot(ctx, n, req)
			switch {
			case ctx.Err() != nil:
			case err != nil && (client.IsUnreachable(err) || client.IsNoLeader(err)) && wait:
				fmt.Fprintf(w, "[%4.0fs] coordinator: %v (still trying)\n", time.Since(start).Seconds(), err)
			case err != nil:
				failed[n] = x.conflictHint(notFoundHint(err, n), n)
				fmt.Fprintf(x.io.Stderr, "%s: %v\n", n, err)
			default:
				last[n] = p
			}
			if p := last[n]; p != nil {
				line := p.Phase
				if p.DestinationState != "" {
					dst := p.DestinationState
					if p.DestinationStatus != "" {
						dst += "/" + p.DestinationStatus
					}
					line += fmt.Sprintf(" (in %s: %s)", p.To, dst)
				}
				if p.Message != "" {
					line += ": " + p.Message
				}
				if line != shown[n] {
					shown[n] = line
					fmt.Fprintf(w, "[%4.0fs] %s: %s\n", time.Since(start).Seconds(), n, line)
				}
			}
			if failed[n] == nil && (last[n] == nil || !last[n].Done) {
				pending++
			}
		}
		if !wait || pending == 0 || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(defaultInterval):
		}
	}
	if x.structured() {
		var out []wire.PivotProgress
		for _, n := range names {
			if p := last[n]; p != nil {
				out = append(out, *p)
			}
		}
		if len(names) == 1 && len(out) == 1 {
			_ = x.print(out[0], nil)
		} else {
			_ = x.print(wire.List[wire.PivotProgress]{Items: out}, nil)
		}
	}
	var bad []string
	for _, n := range names {
		if err := failed[n]; err != nil {
			bad = append(bad, n+": "+err.Error())
		}
	}
	if len(bad) > 0 {
		if len(names) == 1 {
			return failed[names[0]]
		}
		return withHints(fmt.Errorf("pivot to %s failed for %d of %d host(s):\n  %s", req.To, len(bad), len(names), strings.Join(bad, "\n  ")), "run the same pivot again once the cause is fixed: every step continues where it stopped")
	}
	if !wait {
		return nil
	}
	var left []string
	for _, n := range names {
		if p := last[n]; p == nil || !p.Done {
			phase := "not started"
			if p != nil {
				phase = p.Phase
			}
			left = append(left, n+": "+phase)
		}
	}
	if len(left) > 0 {
		what := "timed out after " + x.g.timeout.String()
		if errors.Is(x.ctx.Err(), context.Canceled) {
			what = "interrupted"
		}
		return &failure{code: ExitFailed, err: fmt.Errorf("%s; %d of %d host(s) not adopted in %s yet:\n  %s", what, len(left), len(names), req.To, strings.Join(left, "\n  ")),
			hints: []string{"run the same pivot again: every step continues where it stopped"}}
	}
	fmt.Fprintf(w, "pivot done: %d host(s) adopted in %s in %s\n", len(names), req.To, time.Since(start).Truncate(100*time.Millisecond))
	return nil
}
