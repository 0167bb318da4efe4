package client

import (
	"context"
	"net/http"

	"github.com/rackfence/rackfence/shared/wire"
)

// SecretsStatus reads GET /v1/secrets (admin): the secrets keys of the
// member answering (the leader, or with WithStale(true) the member
// reached) and how many credentials each seals.
func (c *Client) SecretsStatus(ctx context.Context) (*wire.SecretsStatus, error) {
	var out wire.SecretsStatus
	if _, err := c.call(ctx, http.MethodGet, "/v1/secrets", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Reencrypt re-seals every credentials record under the primary key: POST
// /v1/secrets/reencrypt (admin).
func (c *Client) Reencrypt(ctx context.Context) (*wire.ReencryptResult, error) {
	var out wire.ReencryptResult
	if _, err := c.call(ctx, http.MethodPost, "/v1/secrets/reencrypt", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Snapshot asks the member reached to take a Raft snapshot now: POST
// /v1/cluster/snapshot (admin).
func (c *Client) Snapshot(ctx context.Context) (*wire.SnapshotResult, error) {
	var out wire.SnapshotResult
	if _, err := c.call(ctx, http.MethodPost, "/v1/cluster/snapshot", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
