package ctl

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// checkChunkSize validates host list's --chunk-size: 0 (one request) up
// to wire.MaxPageSize.
func checkChunkSize(n int) error {
	if n < 0 || n > wire.MaxPageSize {
		return usagef("--chunk-size %d is not a page size: use 1 to %d hosts a request, or 0 for the whole list in one answer", n, wire.MaxPageSize)
	}
	return nil
}

// listHostsPaged is "host list" read page by page: the table asks only
// for summaries and prints each page's rows as the page arrives (columns
// sized by the first page, widened when a later one needs it); -o json
// streams whole hosts as one valid List document; -o yaml prints once
// every page is in.
func (x *Ctx) listHostsPaged(cl *client.Client, f client.HostFilter, lf *listFilter, chunk int, labels bool) error {
	o := client.PageOptions{Limit: chunk, Summary: !x.structured()}
	// The filters the coordinator does not apply (--status, --error,
	// --intents-pending, a state only the table shows) keep rows page by
	// page.
	keep := func(fn func(*wire.List[wire.Host]) error) func(*wire.List[wire.Host]) error {
		return func(l *wire.List[wire.Host]) error {
			l.Items = lf.keep(l.Items)
			return fn(l)
		}
	}
	var err error
	switch x.g.output {
	case OutTable:
		// A table is for reading: one that outlived its view goes on
		// after its last row, from a newer view, and says so once.
		o.RestartExpired = true
		noted := false
		o.Restarted = func(after string) {
			if !noted {
				noted = true
				fmt.Fprintf(x.io.Stderr, "note: the list outlived the coordinator's view (kept a minute from its first page); rows after %s come from a newer view\n", after)
			}
		}
		pt := &pagedTable{w: x.io.Stdout, width: x.tableWidth(), labels: labels}
		if err = cl.ListHostsPages(x.ctx, f, o, keep(pt.page)); err == nil {
			pt.end()
		}
	default:
		// -o json and -o yaml are one consistent view or an error.
		err = structuredPages(x, func(fn func(*wire.List[wire.Host]) error) error {
			return cl.ListHostsPages(x.ctx, f, o, keep(fn))
		})
	}
	return listExpired(err, "a list is kept a minute from its first page, by the member that answered the first; the table output goes on by itself")
}

// pagedTable prints hostTable page by page.
type pagedTable struct {
	w       io.Writer
	width   int
	labels  bool
	rows    pagedRows
	pending bool
}

func (p *pagedTable) page(l *wire.List[wire.Host]) error {
	t := &table{header: hostTableHeader(p.labels)}
	for i := range l.Items {
		cells, pend := hostCells(&l.Items[i], p.labels)
		p.pending = p.pending || pend
		t.add(cells...)
	}
	p.rows.w, p.rows.width, p.rows.header = p.w, p.width, t.header
	p.rows.page(t)
	return nil
}

func (p *pagedTable) end() {
	if p.rows.rows == 0 {
		fmt.Fprintln(p.w, "No hosts.")
		return
	}
	if p.pending {
		fmt.Fprintln(p.w, "* not yet acknowledged by the rack's lease holder")
	}
}

// pagedJSON writes a wire.List of every page's items as they arrive,
// indented as -o json prints any object.
type pagedJSON[T any] struct {
	w       io.Writer
	n       int
	index   uint64
	started bool
}

func (p *pagedJSON[T]) start() error {
	if p.started {
		return nil
	}
	p.started = true
	_, err := io.WriteString(p.w, "{\n  \"items\": [")
	return err
}

func (p *pagedJSON[T]) page(l *wire.List[T]) error {
	if err := p.start(); err != nil {
		return err
	}
	p.index = l.Index
	for i := range l.Items {
		b, err := json.MarshalIndent(&l.Items[i], "    ", "  ")
		if err != nil {
			return err
		}
		sep := ",\n    "
		if p.n == 0 {
			sep = "\n    "
		}
		if _, err := fmt.Fprintf(p.w, "%s%s", sep, b); err != nil {
			return err
		}
		p.n++
	}
	return nil
}

func (p *pagedJSON[T]) end() error {
	if err := p.start(); err != nil {
		return err
	}
	closing := "\n  ]"
	if p.n == 0 {
		closing = "]"
	}
	_, err := fmt.Fprintf(p.w, "%s,\n  \"index\": %d\n}\n", closing, p.index)
	return err
}
