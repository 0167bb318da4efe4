package ctl

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// The lists other than host list (events, credentials list, token list,
// rack leases, audit) are read --chunk-size items a request and printed as
// the pages arrive: a table row per item (columns sized by the first
// page, widened when a later one needs it), -o json one List document
// written item by item; -o yaml prints once every page is in.

// chunkFlag adds --chunk-size (default def, 1 to max) for a list of what.
func chunkFlag(fs *pflag.FlagSet, what string, def, max int) *chunk {
	c := &chunk{what: what, max: max}
	fs.IntVar(&c.n, "chunk-size", def, fmt.Sprintf("%s asked per request, 1 to %d; rows print as each page arrives", what, max))
	return c
}

type chunk struct {
	n, max int
	what   string
}

func (c *chunk) check() error {
	if c.n < 1 || c.n > c.max {
		return usagef("--chunk-size %d is not a page size: use 1 to %d %s a request", c.n, c.max, c.what)
	}
	return nil
}

// goOnOptions are the page options of a list that goes on after
// list_expired (credentials, tokens, a rack's lease history): a table is
// for reading, so one that outlived its view goes on after its last row,
// from a newer view, and says so once on stderr; -o json and -o yaml are
// one consistent view or an error.
func (x *Ctx) goOnOptions(chunk int) client.PageOptions {
	o := client.PageOptions{Limit: chunk}
	if x.g.output != OutTable {
		return o
	}
	o.RestartExpired = true
	noted := false
	o.Restarted = func(after string) {
		if !noted {
			noted = true
			fmt.Fprintf(x.io.Stderr, "note: the list outlived the coordinator's view (kept a minute from its first page); rows after %s come from a newer view\n", after)
		}
	}
	return o
}

// listPrint is how a list's items print as a table.
type listPrint[T any] struct {
	header []string
	row    func(*T) []string
	// empty is printed for a list without items.
	empty string
}

// printPages reads a list with read (which calls fn page by page) and
// prints it as the pages arrive.
func printPages[T any](x *Ctx, read func(fn func(*wire.List[T]) error) error, lp listPrint[T]) error {
	var err error
	switch x.g.output {
	case OutTable:
		pt := &pagedRows{w: x.io.Stdout, width: x.tableWidth(), header: lp.header}
		err = read(func(l *wire.List[T]) error {
			t := &table{header: lp.header}
			for i := range l.Items {
				t.add(lp.row(&l.Items[i])...)
			}
			pt.page(t)
			return nil
		})
		if err == nil && pt.rows == 0 {
			fmt.Fprintln(x.io.Stdout, lp.empty)
		}
	default:
		err = structuredPages(x, read)
	}
	return listExpired(err, "a list is kept a minute from its first page, by the member that answered the first; an audit trail's page until a rotation drops its file; the credentials, token and lease tables go on by themselves")
}

// structuredPages prints a list read page by page (read calls fn a page at
// a time) as -o json, one List document written as the pages arrive, or
// as -o yaml once every page is in.
func structuredPages[T any](x *Ctx, read func(fn func(*wire.List[T]) error) error) error {
	if x.g.output == OutJSON {
		pj := &pagedJSON[T]{w: x.io.Stdout}
		if err := read(pj.page); err != nil {
			return err
		}
		return pj.end()
	}
	all := wire.List[T]{Items: []T{}}
	err := read(func(l *wire.List[T]) error {
		all.Items = append(all.Items, l.Items...)
		all.Index = l.Index
		return nil
	})
	if err != nil {
		return err
	}
	return x.print(all, nil)
}

// listExpired says what to do when the list being read expired (why: how
// long the coordinator keeps it).
func listExpired(err error, why string) error {
	if errors.Is(err, wire.ErrListExpired) {
		return withHints(err, "the coordinator no longer keeps the list this command was reading ("+why+"): run the command again, with a larger --chunk-size for fewer requests")
	}
	return err
}

// pagedRows prints a table page by page.
type pagedRows struct {
	w      io.Writer
	width  int
	header []string
	widths []int
	rows   int
}

func (p *pagedRows) page(t *table) {
	rows := t.rows
	if p.widths == nil {
		if len(rows) == 0 {
			return
		}
		rows = append([][]string{p.header}, rows...)
	}
	p.widths = t.widths(p.widths)
	writeRows(p.w, rows, p.widths, p.width)
	p.rows += len(t.rows)
}
