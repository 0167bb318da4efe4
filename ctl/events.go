package ctl

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

func init() {
	register(&command{
		path:  "events",
		usage: "NAME [--follow] [--chunk-size N]",
		short: "Show a host's events, newest last",
		long: `--follow keeps printing new events until Ctrl-C, --timeout (0: no limit)
or the host's deletion. With -o json, --follow prints one event object per
line. Without --follow the events are read --chunk-size a request (default
500), rows printing as each page arrives; -o json streams one list, -o yaml prints
once every page is in.`,
		setup: eventsCmd,
	})
}

func eventsCmd(fs *pflag.FlagSet) func(*Ctx, []string) error {
	follow := fs.BoolP("follow", "f", false, "keep printing new events")
	ch := chunkFlag(fs, "events", wire.DefaultPageSize, wire.MaxPageSize)
	return func(x *Ctx, args []string) error {
		name, err := oneName(args, "events NAME")
		if err != nil {
			return err
		}
		if err := ch.check(); err != nil {
			return err
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		if !*follow {
			read := func(fn func(*wire.List[wire.Event]) error) error {
				return cl.EventsPages(x.ctx, name, client.PageOptions{Limit: ch.n}, fn)
			}
			return notFoundHint(printPages(x, read, listPrint[wire.Event]{
				header: eventHeader,
				row: func(e *wire.Event) []string {
					return []string{e.Time.UTC().Format(time.RFC3339), e.Type, e.Reason, e.Message}
				},
				empty: fmt.Sprintf("No events for %s.", name),
			}), name)
		}
		l, err := cl.Events(x.ctx, name)
		if err != nil {
			return notFoundHint(err, name)
		}
		return x.followEvents(cl, name, l.Items)
	}
}

var eventHeader = []string{"TIME", "TYPE", "REASON", "MESSAGE"}

func eventTable(w io.Writer, evs []wire.Event, header bool, width int) {
	t := &table{header: eventHeader}
	for _, e := range evs {
		t.add(e.Time.UTC().Format(time.RFC3339), e.Type, e.Reason, e.Message)
	}
	if !header {
		// Follow mode: fixed columns, no header after the first batch.
		for _, r := range t.rows {
			fmt.Fprintf(w, "%-20s  %-7s  %-22s  %s\n", r[0], r[1], r[2], r[3])
		}
		return
	}
	t.write(w, width)
}

// eventKey identifies an event across polls.
func eventKey(e wire.Event) string {
	if e.Index != 0 {
		return fmt.Sprint(e.Index)
	}
	return e.Time.Format(time.RFC3339Nano) + "\x00" + e.Reason + "\x00" + e.Message
}

func (x *Ctx) followEvents(cl *client.Client, name string, first []wire.Event) error {
	ctx := x.ctx
	if x.g.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, x.g.timeout)
		defer cancel()
	}
	seen := map[string]bool{}
	emit := func(evs []wire.Event) {
		var fresh []wire.Event
		for _, e := range evs {
			if k := eventKey(e); !seen[k] {
				seen[k] = true
				fresh = append(fresh, e)
			}
		}
		if x.structured() {
			for _, e := range fresh {
				if x.g.output == OutJSON {
					b, _ := json.Marshal(e)
					fmt.Fprintf(x.io.Stdout, "%s\n", b)
				} else {
					fmt.Fprint(x.io.Stdout, "---\n")
					_ = x.print(e, nil)
				}
			}
			return
		}
		eventTable(x.io.Stdout, fresh, false, 0)
	}
	if !x.structured() {
		fmt.Fprintf(x.io.Stdout, "%-20s  %-7s  %-22s  %s\n", "TIME", "TYPE", "REASON", "MESSAGE")
	}
	emit(first)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(defaultInterval):
		}
		l, err := cl.Events(ctx, name)
		switch {
		case ctx.Err() != nil:
			return nil
		case client.IsNotFound(err):
			fmt.Fprintf(x.io.Stderr, "host %s was deleted\n", name)
			return nil
		case client.IsUnreachable(err) || client.IsNoLeader(err):
			fmt.Fprintf(x.io.Stderr, "coordinator: %v (retrying)\n", err)
			continue
		case err != nil:
			return err
		}
		emit(l.Items)
	}
}
