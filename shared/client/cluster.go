package client

import (
	"context"
	"net/http"

	"github.com/rackfence/rackfence/shared/wire"
)

// Health checks that a member serves: GET /v1/health (no token needed).
func (c *Client) Health(ctx context.Context) error {
	_, err := c.call(ctx, http.MethodGet, "/v1/health", nil, nil, nil)
	return err
}

// Status reads the cluster's status as the answering member sees it: GET
// /v1/status.
func (c *Client) Status(ctx context.Context) (*wire.ClusterStatus, error) {
	var out wire.ClusterStatus
	if _, err := c.call(ctx, http.MethodGet, "/v1/status", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Members lists the Raft servers: GET /v1/cluster/members.
func (c *Client) Members(ctx context.Context) (*wire.List[wire.Member], error) {
	return getList[wire.Member](ctx, c, "/v1/cluster/members", nil)
}

// Join asks the leader to add a server as voter: POST /v1/cluster/join.
func (c *Client) Join(ctx context.Context, r wire.JoinRequest) error {
	_, err := c.call(ctx, http.MethodPost, "/v1/cluster/join", nil, r, nil)
	return err
}

// RemoveMember removes a Raft server: DELETE /v1/cluster/members/{id}.
func (c *Client) RemoveMember(ctx context.Context, id string) error {
	_, err := c.call(ctx, http.MethodDelete, "/v1/cluster/members/"+seg(id), nil, nil, nil)
	return err
}
