package ctl

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/shared/api"
)

func init() {
	register(&command{
		path:  "token create",
		usage: "--role admin|operator|viewer|agent [--rack R]",
		short: "Create an API token (admin); agent tokens are scoped to one rack",
		long: `Prints only the token, so it can go straight to a file:
  rackfencectl token create --role agent --rack r1 > /etc/rackfence/agent-r1.token
Roles: viewer reads; operator also applies hosts and intents; admin also
manages credentials, tokens and members; agent serves one rack (--rack).`,
		setup: tokenCreate,
	})
}

func tokenCreate(fs *pflag.FlagSet) func(*Ctx, []string) error {
	role := fs.String("role", "", "admin, operator, viewer or agent (required)")
	rack := fs.String("rack", "", "rack of an agent token (required with --role agent)")
	return func(x *Ctx, args []string) error {
		if len(args) > 0 {
			return usagef("token create takes no arguments")
		}
		switch *role {
		case api.RoleAdmin, api.RoleOperator, api.RoleViewer:
			if *rack != "" {
				return usagef("--rack applies only to --role agent")
			}
		case api.RoleAgent:
			if err := api.ValidateName("--rack", *rack); err != nil {
				return usagef("--role agent needs --rack: %v", err)
			}
		case "":
			return usagef("--role is required: admin, operator, viewer or agent")
		default:
			return usagef("--role %q is not a role: use admin, operator, viewer or agent", *role)
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		t, err := cl.CreateToken(x.ctx, api.TokenRequest{Role: *role, Rack: *rack})
		if err != nil {
			return err
		}
		return x.print(t, func(w io.Writer) { fmt.Fprintln(w, t.Token) })
	}
}
