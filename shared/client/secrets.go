package client

import (
	"context"
	"net/http"

	"github.com/rackfence/rackfence/shared/api"
)

// SecretsStatus reads GET /v1/secrets (admin): the secrets keys of the
// member answering (the leader, or with WithStale(true) the member
// reached) and how many credentials each seals.
func (c *Client) SecretsStatus(ctx context.Context) (*api.SecretsStatus, error) {
	var out api.SecretsStatus
	if _, err := c.call(ctx, http.MethodGet, "/v1/secrets", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Reencrypt re-seals every credentials record under the primary key: POST
// /v1/secrets/reencrypt (admin).
func (c *Client) Reencrypt(ctx context.Context) (*api.ReencryptResult, error) {
	var out api.ReencryptResult
	if _, err := c.call(ctx, http.MethodPost, "/v1/secrets/reencrypt", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Snapshot asks the member reached to take a Raft snapshot now: POST
// /v1/cluster/snapshot (admin).
func (c *Client) Snapshot(ctx context.Context) (*api.SnapshotResult, error) {
	var out api.SnapshotResult
	if _, err := c.call(ctx, http.MethodPost, "/v1/cluster/snapshot", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
