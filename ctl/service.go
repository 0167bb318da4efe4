package ctl

import (
	"fmt"
	"sort"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/shared/wire"
)

// host service: the service intent.

func init() {
	register(&command{
		path:  "host service",
		usage: "NAME...|--rack R|-l SELECTOR [--yes] [--reason T] [--wait]",
		short: "Bring provisioned hosts' BIOS settings and firmware to their spec once",
		long: `The agent takes each host into the provisioning state servicing and brings
its firmware (spec.firmware) and then its BIOS settings (spec.bios) to the
spec once, without an update policy on the host: a component already at
its version is not flashed, a setting already at its value is not sent.
Firmware flashes cost no power cycle (power is held while one runs); BIOS
settings that differ cost one (hard power-off, power-on), which also starts
the new images. The coordinator states each host's plan and its power
cycles when it takes the request, before anything starts; they are
printed here and recorded in the host's ServicingStarted event. RAID is
not changed on a provisioned host.

Refused (exit 4), naming the host, unless the host is provisioned or
externally provisioned and has spec.bios or spec.firmware; while it is
detached, drained or being deleted; and while a BMC task is recorded on it
(wait for it to end). A failure stops in servicing with a servicing error:
'rackfencectl resume' retries.

--wait blocks until the agent dropped the intent and the host is
provisioned again; a host fails when it reports a servicing error.

` + bulkHelp + `

Examples:
  rackfencectl host service r1-h07 --wait
  rackfencectl host service -l role=compute --yes --reason "BIOS 2.19 baseline"`,
		setup: serviceCmd,
	})
}

func serviceCmd(fs *pflag.FlagSet) func(*Ctx, []string) error {
	rack := fs.String("rack", "", "act on every host of this rack")
	reason := fs.String("reason", "", "why (kept with the intent)")
	wait := fs.Bool("wait", false, "block until serviced, bounded by --timeout")
	pick := addSelection(fs)
	return func(x *Ctx, args []string) error {
		req := wire.IntentRequest{Reason: *reason}
		if err := wire.ValidateService(&req); err != nil {
			return usagef("--%v", err)
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		names, before, err := x.opTargets(cl, "service", args, *rack, pick)
		if err != nil {
			return err
		}
		results, err := x.sendEach(names, before, "service requested", func(n string) (any, error) {
			return cl.Service(x.ctx, n, req)
		})
		x.printPlans(results)
		if err != nil {
			return err
		}
		return x.finishOp(cl, goalServiced, *wait, names, results, before, *rack)
	}
}

// printPlans prints what each host's servicing will do and cost.
func (x *Ctx) printPlans(results map[string]any) {
	if x.structured() {
		return
	}
	names := make([]string, 0, len(results))
	for n := range results {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if it, ok := results[n].(*wire.Intent); ok && it.Plan != nil {
			fmt.Fprintf(x.io.Stdout, "%s: plan: %s\n", n, it.Plan.Message)
		}
	}
}
