package client

import (
	"context"
	"net/http"

	"github.com/rackfence/rackfence/shared/wire"
)

// Pivot runs one step of handing a host to another tier: POST
// /v1/hosts/{name}/pivot {to, deleteSource} on the source tier. Each step
// is idempotent and answers the phase reached; call it again until Done.
func (c *Client) Pivot(ctx context.Context, name string, r wire.PivotRequest) (*wire.PivotProgress, error) {
	var out wire.PivotProgress
	if _, err := c.call(ctx, http.MethodPost, "/v1/hosts/"+seg(name)+"/pivot", nil, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
