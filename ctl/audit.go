package ctl

import (
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

func init() {
	register(&command{
		path:  "audit",
		usage: "[--limit N] [--chunk-size N]",
		short: "Show a member's audit trail, newest first: who changed what, and what was refused (admin)",
		long: `Each member records the operator actions it carried out or refused (every
write, credential reveals, token creation and revocation) in its own
DATA-DIR/audit.log; a write sent to a follower is recorded by the leader,
with VIA naming the follower. The answer is the trail of the member that
answers, so name one member to read its trail:
  rackfencectl audit --coordinator https://10.0.0.2:7480 --limit 50 -o json
The newest record comes first. --limit 0 reads every record the member
keeps (audit.log and audit.log.1), --chunk-size records a request, rows
printing as each page arrives; -o json streams one list, newest first
(-o yaml prints once every page is in).
Records written while the command reads are not in it. Never a request
body: passwords and tokens are not in it.`,
		setup: auditCmd,
	})
}

// errEnough stops a paged read once --limit records are in.
var errEnough = errors.New("enough records")

func auditCmd(fs *pflag.FlagSet) func(*Ctx, []string) error {
	limit := fs.Int("limit", 100, "how many of the newest records (0: every record the member keeps)")
	ch := chunkFlag(fs, "records", wire.DefaultPageSize, wire.MaxAuditPageSize)
	return func(x *Ctx, args []string) error {
		if len(args) > 0 {
			return usagef("audit takes no arguments")
		}
		if *limit < 0 {
			return usagef("--limit %d is out of range: use a number of records, or 0 for every record the member keeps", *limit)
		}
		if err := ch.check(); err != nil {
			return err
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		page := ch.n
		if *limit > 0 {
			page = min(page, *limit)
		}
		// Pages come newest first, each oldest first: turned around, the
		// rows are newest first throughout.
		read := func(fn func(*wire.List[wire.AuditRecord]) error) error {
			if *limit > 0 && *limit <= ch.n { // one page: one request
				l, err := cl.Audit(x.ctx, *limit)
				if err != nil {
					return err
				}
				slices.Reverse(l.Items)
				l.Continue = ""
				return fn(l)
			}
			left := *limit
			err := cl.AuditPages(x.ctx, client.PageOptions{Limit: page}, func(l *wire.List[wire.AuditRecord]) error {
				if *limit > 0 && len(l.Items) > left {
					l.Items = l.Items[len(l.Items)-left:]
				}
				slices.Reverse(l.Items)
				if err := fn(l); err != nil {
					return err
				}
				if left -= len(l.Items); *limit > 0 && left <= 0 {
					return errEnough
				}
				return nil
			})
			if errors.Is(err, errEnough) {
				return nil
			}
			return err
		}
		return printPages(x, read, listPrint[wire.AuditRecord]{
			header: []string{"TIME", "MEMBER", "ACTOR", "ROLE", "CODE", "METHOD", "ROUTE", "TARGET", "VIA"},
			row: func(r *wire.AuditRecord) []string {
				return []string{stamp(r.Time), r.Member, r.Actor, r.Role, fmt.Sprint(r.Code), r.Method, r.Route, r.Target, r.Via}
			},
			empty: "No audit records on this member.",
		})
	}
}
