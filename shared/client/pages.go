package client

import (
	"context"
	"errors"
	"net/url"
	"strconv"

	"github.com/rackfence/rackfence/shared/wire"
)

// eachPage reads the list at path page by page (limit and continue, q
// holding its other parameters), calling fn with each page as it arrives.
// It stops at the last page or at fn's first error, which it returns. A
// list the coordinator no longer keeps fails with an error matching
// wire.ErrListExpired (call again to start over), or, for a list that
// takes after (g) with o.RestartExpired, goes on by itself after the last
// item given to fn, at a new index. A coordinator that predates paging
// answers one page holding everything.
func eachPage[T any](ctx context.Context, c *Client, path string, q url.Values, o PageOptions, limit int, g *goOn[T], fn func(*wire.List[T]) error) error {
	if q == nil {
		q = url.Values{}
	}
	q.Set(wire.ParamLimit, strconv.Itoa(limit))
	q.Del(wire.ParamContinue)
	q.Del(wire.ParamAfter)
	// last: the last item given to fn; skip: the items up to it are
	// given already (a restarted list, until a page goes beyond it).
	var last, skip *T
	restarts := 0
	for {
		l, err := getList[T](ctx, c, path, q)
		if err != nil && g != nil && o.RestartExpired && last != nil && restarts < listRestarts && errors.Is(err, wire.ErrListExpired) {
			after := g.after(last)
			c.log.Debug("list expired; starting a new one after the last item read", "path", path, "after", after)
			q.Del(wire.ParamContinue)
			q.Set(wire.ParamAfter, after)
			skip = last
			restarts++
			if o.Restarted != nil {
				o.Restarted(after)
			}
			continue
		}
		if err != nil {
			return err
		}
		if skip != nil {
			// A member that predates after answers from the first item.
			kept := l.Items[:0]
			for i := range l.Items {
				if g.past(skip, &l.Items[i]) {
					kept = append(kept, l.Items[i])
				}
			}
			l.Items = kept
			if len(kept) > 0 {
				skip = nil
			}
		}
		n := len(l.Items)
		if n > 0 {
			v := l.Items[n-1]
			last, restarts = &v, 0
		}
		if n > 0 || l.Continue == "" {
			if err := fn(l); err != nil {
				return err
			}
		}
		if l.Continue == "" {
			return nil
		}
		q.Del(wire.ParamAfter)
		q.Set(wire.ParamContinue, l.Continue)
	}
}

// goOn is how a list that takes after goes on after an item: after is
// the parameter's value for it (shared/wire list_after.go), past says
// whether x comes after last in the list's order.
type goOn[T any] struct {
	after func(*T) string
	past  func(last, x *T) bool
}

var (
	credentialsGoOn = &goOn[wire.Credentials]{after: wire.CredentialsAfter,
		past: func(last, x *wire.Credentials) bool { return x.Name > last.Name }}
	tokensGoOn = &goOn[wire.Token]{after: wire.TokenAfter,
		past: func(last, x *wire.Token) bool {
			if !x.CreatedAt.Equal(last.CreatedAt) {
				return x.CreatedAt.After(last.CreatedAt)
			}
			return x.ID > last.ID
		}}
	leasesGoOn = &goOn[wire.LeaseRecord]{after: wire.LeaseAfter,
		past: func(last, x *wire.LeaseRecord) bool { return x.Epoch > last.Epoch }}
)

func pageSize(limit int) int {
	if limit <= 0 {
		return wire.DefaultPageSize
	}
	return limit
}

// EventsPages reads a host's events page by page, oldest first, every page
// at the first page's index (GET /v1/hosts/{name}/events); o.Limit is the
// page size (0: wire.DefaultPageSize). See eachPage for fn and errors. It
// does not go on after list_expired (o.RestartExpired): a host keeps at
// most 100 events, which one page of the default size reads.
func (c *Client) EventsPages(ctx context.Context, name string, o PageOptions, fn func(*wire.List[wire.Event]) error) error {
	return eachPage[wire.Event](ctx, c, "/v1/hosts/"+seg(name)+"/events", nil, o, pageSize(o.Limit), nil, fn)
}

// CredentialsPages reads the credentials records (no passwords) page by
// page, by name: GET /v1/credentials. With o.RestartExpired a list that
// expired goes on after the last record given (after=NAME): a record
// created meanwhile whose name sorts before it is missed.
func (c *Client) CredentialsPages(ctx context.Context, o PageOptions, fn func(*wire.List[wire.Credentials]) error) error {
	return eachPage(ctx, c, "/v1/credentials", nil, o, pageSize(o.Limit), credentialsGoOn, fn)
}

// TokensPages reads the tokens (never a secret) page by page, oldest
// first: GET /v1/tokens (admin). With o.RestartExpired a list that
// expired goes on after the last token given (after=CREATED,ID): tokens
// are created at the end of the list, so only one whose creation time a
// leader's clock set behind the last token's is missed.
func (c *Client) TokensPages(ctx context.Context, o PageOptions, fn func(*wire.List[wire.Token]) error) error {
	return eachPage(ctx, c, "/v1/tokens", nil, o, pageSize(o.Limit), tokensGoOn, fn)
}

// LeaseHistoryPages reads a rack's lease history page by page, oldest
// first: GET /v1/racks/{rack}/leases. With o.RestartExpired a list that
// expired goes on after the last record given (after=EPOCH; epochs only
// grow, so nothing is missed but the end of a lease already given).
func (c *Client) LeaseHistoryPages(ctx context.Context, rack string, o PageOptions, fn func(*wire.List[wire.LeaseRecord]) error) error {
	return eachPage(ctx, c, "/v1/racks/"+seg(rack)+"/leases", nil, o, pageSize(o.Limit), leasesGoOn, fn)
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
	return eachPage[wire.AuditRecord](ctx, c, "/v1/audit", nil, o, limit, nil, fn)
}
