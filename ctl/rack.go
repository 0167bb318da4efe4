package ctl

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/shared/wire"
)

func init() {
	register(&command{
		path:  "rack list",
		usage: "",
		short: "List racks with their lease holder (the active agent) and host count",
		setup: rackList,
	})
	register(&command{
		path:  "rack leases",
		usage: "RACK [--chunk-size N]",
		short: "Show a rack's lease history, newest last (who managed it when)",
		long: `The history is read --chunk-size records a request (default 500), rows
printing as each page arrives; -o json streams one list, -o yaml prints
once every page is in.`,
		setup: rackLeases,
	})
}

func rackList(fs *pflag.FlagSet) func(*Ctx, []string) error {
	return func(x *Ctx, args []string) error {
		if len(args) > 0 {
			return usagef("rack list takes no arguments")
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		l, err := cl.Racks(x.ctx)
		if err != nil {
			return err
		}
		return x.print(l, func(w io.Writer) { rackTable(w, l.Items, "", x.tableWidth()) })
	}
}

func rackTable(w io.Writer, racks []wire.Rack, only string, width int) {
	t := &table{header: []string{"RACK", "HOSTS", "EPOCH", "TTL", "HOLDER"}}
	for _, r := range racks {
		if only != "" && r.Name != only {
			continue
		}
		holder, epoch, ttl := r.Holder, fmt.Sprint(r.Epoch), r.TTL.D().String()
		if holder == "" {
			holder, epoch, ttl = "(none: no agent holds the lease)", "", ""
		}
		t.add(r.Name, fmt.Sprint(r.Hosts), epoch, ttl, holder)
	}
	if len(t.rows) == 0 {
		fmt.Fprintln(w, "No racks.")
		return
	}
	t.write(w, width)
}

func rackLeases(fs *pflag.FlagSet) func(*Ctx, []string) error {
	ch := chunkFlag(fs, "lease records", wire.DefaultPageSize, wire.MaxPageSize)
	return func(x *Ctx, args []string) error {
		if len(args) != 1 {
			return usagef("expected one RACK")
		}
		if err := wire.ValidateName("RACK", args[0]); err != nil {
			return usagef("%v", err)
		}
		if err := ch.check(); err != nil {
			return err
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		read := func(fn func(*wire.List[wire.LeaseRecord]) error) error {
			return cl.LeaseHistoryPages(x.ctx, args[0], x.goOnOptions(ch.n), fn)
		}
		return printPages(x, read, listPrint[wire.LeaseRecord]{
			header: []string{"EPOCH", "GRANTED", "ENDED", "END", "HOLDER"},
			row: func(r *wire.LeaseRecord) []string {
				ended, end := "", r.End
				if r.EndedAt != nil {
					ended = r.EndedAt.UTC().Format(time.RFC3339)
				}
				if end == "" {
					end = "held"
				}
				return []string{fmt.Sprint(r.Epoch), r.GrantedAt.UTC().Format(time.RFC3339), ended, end, r.Holder}
			},
			empty: fmt.Sprintf("Rack %s has had no lease.", args[0]),
		})
	}
}
