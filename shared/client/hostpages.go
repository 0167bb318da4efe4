package client

import (
	"context"
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
}

// ListHostsPages lists hosts page by page (GET /v1/hosts?limit=&continue=),
// calling fn with each page as it arrives; every page carries the first
// page's Index. It stops at the last page or at fn's first error, which
// it returns. A list whose index the coordinator no longer keeps fails
// with an error matching wire.ErrListExpired: call it again to start
// over. A coordinator that predates paging answers one page holding
// every host.
func (c *Client) ListHostsPages(ctx context.Context, f HostFilter, o PageOptions, fn func(*wire.List[wire.Host]) error) error {
	limit := o.Limit
	if limit <= 0 {
		limit = wire.DefaultPageSize
	}
	cont := ""
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
		}
		l, err := getList[wire.Host](ctx, c, "/v1/hosts", q)
		if err != nil {
			return err
		}
		if err := fn(l); err != nil {
			return err
		}
		if l.Continue == "" {
			return nil
		}
		cont = l.Continue
	}
}
