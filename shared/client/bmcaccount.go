package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/rackfence/rackfence/shared/wire"
)

// GetBMCAccount reads host's BMC account record: GET
// /v1/hosts/{name}/bmc-account. With reveal it includes the current and
// pending passwords: an agent must name the epoch it holds the host's
// rack under (epoch; an admin passes 0).
func (c *Client) GetBMCAccount(ctx context.Context, host string, reveal bool, epoch uint64) (*wire.BMCAccount, error) {
	var out wire.BMCAccount
	q := url.Values{}
	if reveal {
		q.Set(wire.ParamReveal, "true")
		if epoch > 0 {
			q.Set("epoch", strconv.FormatUint(epoch, 10))
		}
	}
	if _, err := c.call(ctx, http.MethodGet, "/v1/hosts/"+seg(host)+"/bmc-account", q, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PutBMCAccount writes host's BMC account record (the rack's lease
// holder): PUT /v1/hosts/{name}/bmc-account. A stale epoch is refused
// (IsStaleEpoch-style 409).
func (c *Client) PutBMCAccount(ctx context.Context, host string, w wire.BMCAccountWrite) (*wire.BMCAccount, error) {
	var out wire.BMCAccount
	if _, err := c.call(ctx, http.MethodPut, "/v1/hosts/"+seg(host)+"/bmc-account", nil, w, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
