package client

import (
	"context"
	"errors"
	"net/url"
	"strconv"

	"github.com/rackfence/rackfence/shared/wire"
)

// PageOptions shape a paged list.
type PageOptions struct {
	// Limit is the page size; 0 means wire.DefaultPageSize.
	Limit int
	// Summary asks for wire.HostSummary items (view=summary): what the
	// host table shows; the hosts' other fields stay zero.
	Summary bool
	// RestartExpired: when the coordinator no longer keeps the list
	// (list_expired: a page read more than a minute after the first,
	// or another member answered), start a new list by itself, at a new
	// index, after the last host already given to fn (GET
	// /v1/hosts?after=LAST: no page before it is read again). The
	// credentials, tokens and lease-history lists go on the same way
	// (CredentialsPages, TokensPages, LeaseHistoryPages); the others
	// ignore it. No host is
	// given twice; but a host created in between whose name sorts before
	// the last host given is missed, a host deleted in between may have
	// been given, and the hosts given before the restart are as they were
	// at the old index (pages after it carry the new Index). A list gives
	// up after 3 restarts in a row that gave no host. Without it such a
	// list fails with wire.ErrListExpired.
	RestartExpired bool
	// Restarted, when set, is called each time a list restarts on
	// list_expired (RestartExpired), with the after value of the last
	// item given before (a host's name).
	Restarted func(after string)
}

// ListHostsPages lists hosts page by page (GET /v1/hosts?limit=&continue=),
// calling fn with each page as it arrives; every page carries the first
// page's Index. It stops at the last page or at fn's first error, which
// it returns. A list whose index the coordinator no longer keeps fails
// with an error matching wire.ErrListExpired (call it again to start
// over), or starts a new list by itself with o.RestartExpired. A coordinator that predates paging answers one page holding
// every host.
func (c *Client) ListHostsPages(ctx context.Context, f HostFilter, o PageOptions, fn func(*wire.List[wire.Host]) error) error {
	limit := o.Limit
	if limit <= 0 {
		limit = wire.DefaultPageSize
	}
	cont, last, after, restarts := "", "", "", 0
	for {
		q := url.Values{}
		if f.Rack != "" {
			q.Set(wire.ParamRack, f.Rack)
		}
		if f.State != "" {
			q.Set(wire.ParamState, f.State)
		}
		if f.Selector != "" {
			q.Set(wire.ParamSelector, f.Selector)
		}
		if o.Summary {
			q.Set(wire.ParamView, wire.ViewSummary)
		}
		q.Set(wire.ParamLimit, strconv.Itoa(limit))
		if cont != "" {
			q.Set(wire.ParamContinue, cont)
		} else if after != "" {
			q.Set(wire.ParamAfter, after)
		}
		l, err := getList[wire.Host](ctx, c, "/v1/hosts", q)
		if err != nil && o.RestartExpired && last != "" && restarts < listRestarts && errors.Is(err, wire.ErrListExpired) {
			c.log.Debug("host list expired; starting a new one after the last host read", "after", last)
			cont, after = "", last
			restarts++
			if o.Restarted != nil {
				o.Restarted(last)
			}
			continue
		}
		if err != nil {
			return err
		}
		if after != "" {
			// A restarted list: a member that predates after answers
			// from the first host; those up to the last one given are
			// given already.
			kept := l.Items[:0]
			for _, h := range l.Items {
				if h.Name > after {
					kept = append(kept, h)
				}
			}
			l.Items = kept
			if len(kept) > 0 {
				after = ""
			}
		}
		n := len(l.Items)
		if n > 0 {
			// fn may keep fewer items: the list goes on after the
			// last one read.
			last, restarts = l.Items[n-1].Name, 0
		}
		if n > 0 || l.Continue == "" {
			if err := fn(l); err != nil {
				return err
			}
		}
		if l.Continue == "" {
			return nil
		}
		cont = l.Continue
	}
}
