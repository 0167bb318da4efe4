package ctl

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// watchHosts is "host list --watch": the racks' lease holders and the
// hosts, redrawn every interval on a terminal, printed again on change
// otherwise. It ends without error at Ctrl-C or --timeout (0: never).
func (x *Ctx) watchHosts(cl *client.Client, f client.HostFilter, lf *listFilter, interval time.Duration, labels bool) error {
	ctx := x.ctx
	if x.g.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, x.g.timeout)
		defer cancel()
	}
	w := x.io.Stdout
	live := x.io.IsTerminal(w)
	var last []byte
	for {
		var b bytes.Buffer
		err := x.renderView(ctx, &b, cl, f, lf, live, labels)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil && !(client.IsUnreachable(err) || client.IsNoLeader(err)) {
			return err
		}
		if err != nil {
			b.Reset()
			fmt.Fprintf(&b, "coordinator: %v (retrying)\n", err)
		}
		switch {
		case live:
			// Home, draw, clear what is left of the previous frame.
			fmt.Fprintf(w, "\x1b[H\x1b[2J%s", b.Bytes())
		case !bytes.Equal(b.Bytes(), last):
			if x.structured() {
				w.Write(b.Bytes())
			} else {
				fmt.Fprintf(w, "--- %s\n%s", time.Now().UTC().Format(time.RFC3339), b.Bytes())
			}
		}
		last = b.Bytes()
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

func (x *Ctx) renderView(ctx context.Context, w io.Writer, cl *client.Client, f client.HostFilter, lf *listFilter, live, labels bool) error {
	l, err := cl.ListHosts(ctx, f)
	if err != nil {
		return err
	}
	l.Items = lf.keep(l.Items)
	sortHosts(l.Items)
	if x.structured() {
		return x.printTo(w, l)
	}
	racks, err := cl.Racks(ctx)
	if err != nil {
		return err
	}
	if live {
		fmt.Fprintf(w, "rackfencectl host list --watch   %s   (Ctrl-C to stop)\n\n", time.Now().Format("15:04:05"))
	}
	rackTable(w, racks.Items, f.Rack, x.tableWidth())
	fmt.Fprintln(w)
	hostTable(w, l.Items, x.tableWidth(), labels)
	counts := map[string]int{}
	for i := range l.Items {
		counts[hostState(&l.Items[i])]++
	}
	fmt.Fprintf(w, "\n%d hosts:", len(l.Items))
	for _, s := range append([]string{"pending"}, wire.ProvisioningStates...) {
		if n := counts[s]; n > 0 {
			fmt.Fprintf(w, " %d %s", n, s)
		}
	}
	fmt.Fprintln(w)
	return nil
}

func (x *Ctx) printTo(w io.Writer, v any) error { return printTo(w, x.g.output, v, nil) }
