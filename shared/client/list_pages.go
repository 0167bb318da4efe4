package client

import (
	"context"
	"errors"
	"net/url"
	"strconv"

	"github.com/rackfence/rackfence/shared/wire"
)

// listRestarts is how many times a whole-list read starts over on
// list_expired before it returns the error (ListHostsPages: how many
// restarts in a row that gave no host).
const listRestarts = 3

// allPages reads every page of the list at path (limit and continue),
// each of pageSize items (0: wire.DefaultPageSize), and returns them as
// one list at the first page's index. A list the coordinator no longer
// keeps (list_expired) is read again from its start, at a new index
// (nothing read before is kept, so nothing is repeated or mixed), up to
// listRestarts times. A coordinator that predates paging answers one page
// holding everything.
func allPages[T any](ctx context.Context, c *Client, path string, pageSize int) (*wire.List[T], error) {
	if pageSize <= 0 {
		pageSize = wire.DefaultPageSize
	}
	for restart := 0; ; restart++ {
		all, err := readPages[T](ctx, c, path, pageSize)
		if err != nil && errors.Is(err, wire.ErrListExpired) && restart < listRestarts {
			continue
		}
		return all, err
	}
}

func readPages[T any](ctx context.Context, c *Client, path string, pageSize int) (*wire.List[T], error) {
	var all *wire.List[T]
	cont := ""
	for {
		q := url.Values{}
		q.Set(wire.ParamLimit, strconv.Itoa(pageSize))
		if cont != "" {
			q.Set(wire.ParamContinue, cont)
		}
		l, err := getList[T](ctx, c, path, q)
		if err != nil {
			return nil, err
		}
		if all == nil {
			all = &wire.List[T]{Items: l.Items, Index: l.Index}
		} else {
			all.Items = append(all.Items, l.Items...)
		}
		if l.Continue == "" {
			return all, nil
		}
		cont = l.Continue
	}
}
