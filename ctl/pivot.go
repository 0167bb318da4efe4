package ctl

import (
	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/shared/api"
)

func init() {
	register(&command{
		path:  "pivot",
		usage: "NAME...|--rack R --to TIER [--wait]",
		short: "Hand hosts to another tier (site) without redeploying them",
		long: `Detaches the hosts here, waits for the acknowledgement, then creates them in
TIER as externally provisioned with a handoff record; TIER confirms the
detach with this tier before its agent touches them.`,
		setup: pivotCmd,
	})
}

// pivotCmd checks its arguments; the pivot itself is a later issue.
func pivotCmd(fs *pflag.FlagSet) func(*Ctx, []string) error {
	rack := fs.String("rack", "", "pivot every host of this rack")
	to := fs.String("to", "", "destination tier (a --peer-tier of the coordinator; required)")
	fs.Bool("wait", false, "block until the destination tier manages the hosts")
	return func(x *Ctx, args []string) error {
		if _, err := targetNames(args, *rack); err != nil {
			return err
		}
		if err := api.ValidateName("--to", *to); err != nil {
			return usagef("%v", err)
		}
		return failf("pivot is not implemented yet in this rackfencectl")
	}
}
