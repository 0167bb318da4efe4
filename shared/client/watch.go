package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// maxWatchHold bounds a watch sent without a timeout.
const maxWatchHold = 5 * time.Minute

// Watch long-polls a rack: GET /v1/watch?rack=&index=&timeout=. It answers
// when something of the rack changed after index, or after timeout with
// nothing changed (Hosts empty, Index current). timeout 0 leaves the
// coordinator's default. The HTTP request is bounded by timeout plus the
// client's Timeout instead of the Timeout alone.
func (c *Client) Watch(ctx context.Context, rack string, index uint64, timeout time.Duration) (*wire.WatchResponse, error) {
	return c.watch(ctx, rack, index, timeout, true)
}

// WatchWithoutStatus is Watch with status=false: the hosts come without
// their status, and StatusOmitted names those that have one. A
// coordinator older than the parameter ignores it and answers whole hosts
// (StatusOmitted empty), so a caller must accept both.
func (c *Client) WatchWithoutStatus(ctx context.Context, rack string, index uint64, timeout time.Duration) (*wire.WatchResponse, error) {
	return c.watch(ctx, rack, index, timeout, false)
}

func (c *Client) watch(ctx context.Context, rack string, index uint64, timeout time.Duration, status bool) (*wire.WatchResponse, error) {
	q := url.Values{}
	q.Set(wire.ParamRack, rack)
	q.Set(wire.ParamIndex, strconv.FormatUint(index, 10))
	if timeout > 0 {
		q.Set(wire.ParamTimeout, timeout.String())
	}
	if !status {
		q.Set(wire.ParamStatus, "false")
	}
	var out wire.WatchResponse
	hold := timeout
	if hold <= 0 {
		hold = maxWatchHold
	}
	r := request{method: http.MethodGet, path: "/v1/watch", query: q, timeout: hold + c.timeout}
	if _, err := c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
