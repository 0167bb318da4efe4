package client

import (
	"context"
	"net/http"

	"github.com/rackfence/rackfence/shared/wire"
)

// RotateBMCAccount asks for an on-demand rotation of host's BMC account:
// POST /v1/hosts/{name}/bmc-account/rotation. It returns the request
// (the host's intents.rotateCredentials).
func (c *Client) RotateBMCAccount(ctx context.Context, host, reason string) (*wire.Intent, error) {
	var out wire.Intent
	if _, err := c.call(ctx, http.MethodPost, "/v1/hosts/"+seg(host)+"/bmc-account/rotation", nil,
		wire.BMCAccountRotationRequest{Reason: reason}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
