package client

import (
	"context"
	"net/url"
	"strconv"

	"github.com/rackfence/rackfence/shared/wire"
)

// eachPage reads the list at path page by page (limit and continue, q
// holding its other parameters), calling fn with each page as it arrives.
// It stops at the last page or at fn's first error, which it returns. A
// list the coordinator no longer keeps fails with an error matching
// wire.ErrListExpired (call again to start over). A coordinator that
// predates paging answers one page holding everything.
func eachPage[T any](ctx context.Context, c *Client, path string, q url.Values, limit int, fn func(*wire.List[T]) error) error {
	if q == nil {
		q = url.Values{}
	}
	q.Set(wire.ParamLimit, strconv.Itoa(limit))
	q.Del(wire.ParamContinue)
	for {
		l, err := getList[T](ctx, c, path, q)
		if err != nil {
			return err
		}
		if err := fn(l); err != nil {
			return err
		}
		if l.Continue == "" {
			return nil
		}
		q.Set(wire.ParamContinue, l.Continue)
	}
}

func pageSize(limit int) int {
	if limit <= 0 {
		return wire.DefaultPageSize
	}
	return limit
}

// EventsPages reads a host's events page by page, oldest first, every page
// at the first page's index (GET /v1/hosts/{name}/events); o.Limit is the
// page size (0: wire.DefaultPageSize). See eachPage for fn and errors.
func (c *Client) EventsPages(ctx context.Context, name string, o PageOptions, fn func(*wire.List[wire.Event]) error) error {
	return eachPage(ctx, c, "/v1/hosts/"+seg(name)+"/events", nil, pageSize(o.Limit), fn)
}

// CredentialsPages reads the credentials records (no passwords) page by
// page: GET /v1/credentials.
func (c *Client) CredentialsPages(ctx context.Context, o PageOptions, fn func(*wire.List[wire.Credentials]) error) error {
	return eachPage(ctx, c, "/v1/credentials", nil, pageSize(o.Limit), fn)
}

// TokensPages reads the tokens (never a secret) page by page: GET
// /v1/tokens (admin).
func (c *Client) TokensPages(ctx context.Context, o PageOptions, fn func(*wire.List[wire.Token]) error) error {
	return eachPage(ctx, c, "/v1/tokens", nil, pageSize(o.Limit), fn)
}

// LeaseHistoryPages reads a rack's lease history page by page, oldest
// first: GET /v1/racks/{rack}/leases.
func (c *Client) LeaseHistoryPages(ctx context.Context, rack string, o PageOptions, fn func(*wire.List[wire.LeaseRecord]) error) error {
	return eachPage(ctx, c, "/v1/racks/"+seg(rack)+"/leases", nil, pageSize(o.Limit), fn)
}

// AuditPages reads the audit trail of the member that answers page by
// page, newest page first (every page oldest first): GET /v1/audit
// (admin). o.Limit is the page size, 1 to 1000 (0: 100). Every page must
// reach the same member (a token from another is list_expired), as one
// Client's requests do unless its member changes.
func (c *Client) AuditPages(ctx context.Context, o PageOptions, fn func(*wire.List[wire.AuditRecord]) error) error {
	limit := o.Limit
	if limit <= 0 {
		limit = 100
	}
	return eachPage(ctx, c, "/v1/audit", nil, limit, fn)
}
