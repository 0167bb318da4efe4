package ctl

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"
)

func init() {
	register(&command{
		path:  "audit",
		usage: "[--limit N]",
		short: "Show a member's audit trail: who changed what, and what was refused (admin)",
		long: `Each member records the operator actions it carried out or refused (every
write, credential reveals, token creation and revocation) in its own
DATA-DIR/audit.log; a write sent to a follower is recorded by the leader,
with VIA naming the follower. The answer is the trail of the member that
answers, so name one member to read its trail:
  rackfencectl audit --coordinator https://10.0.0.2:7480 --limit 50 -o json
Never a request body: passwords and tokens are not in it.`,
		setup: auditCmd,
	})
}

func auditCmd(fs *pflag.FlagSet) func(*Ctx, []string) error {
	limit := fs.Int("limit", 100, "how many of the newest records (1 to 1000)")
	return func(x *Ctx, args []string) error {
		if len(args) > 0 {
			return usagef("audit takes no arguments")
		}
		if *limit < 1 || *limit > 1000 {
			return usagef("--limit %d is out of range: use 1 to 1000", *limit)
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		l, err := cl.Audit(x.ctx, *limit)
		if err != nil {
			return err
		}
		return x.print(l, func(w io.Writer) {
			if len(l.Items) == 0 {
				fmt.Fprintln(w, "No audit records on this member.")
				return
			}
			t := &table{header: []string{"TIME", "MEMBER", "ACTOR", "ROLE", "CODE", "METHOD", "ROUTE", "TARGET", "VIA"}}
			for _, r := range l.Items {
				t.add(stamp(r.Time), r.Member, r.Actor, r.Role, fmt.Sprint(r.Code), r.Method, r.Route, r.Target, r.Via)
			}
			t.write(w, x.tableWidth())
		})
	}
}
