package client

import (
	"context"
	"net/http"

	"github.com/rackfence/rackfence/shared/wire"
)

// Racks lists racks with their lease holder and host count: GET /v1/racks.
func (c *Client) Racks(ctx context.Context) (*wire.List[wire.Rack], error) {
	return getList[wire.Rack](ctx, c, "/v1/racks", nil)
}

// LeaseHistory lists a rack's last leases, newest last: GET
// /v1/racks/{rack}/leases, every page (allPages).
func (c *Client) LeaseHistory(ctx context.Context, rack string) (*wire.List[wire.LeaseRecord], error) {
	return allPages[wire.LeaseRecord](ctx, c, "/v1/racks/"+seg(rack)+"/leases", 0)
}

func (c *Client) lease(ctx context.Context, method, rack string, r wire.LeaseRequest) (*wire.Lease, error) {
	var out wire.Lease
	if _, err := c.call(ctx, method, "/v1/racks/"+seg(rack)+"/lease", nil, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AcquireLease asks for a rack's lease: POST /v1/racks/{rack}/lease
// {holder, ttl}. A rack held by another holder answers 409.
func (c *Client) AcquireLease(ctx context.Context, rack string, r wire.LeaseRequest) (*wire.Lease, error) {
	return c.lease(ctx, http.MethodPost, rack, r)
}

// RenewLease extends a held lease: PUT /v1/racks/{rack}/lease {holder,
// epoch, ttl}. A lost lease answers 409 (IsStaleEpoch or IsConflict).
func (c *Client) RenewLease(ctx context.Context, rack string, r wire.LeaseRequest) (*wire.Lease, error) {
	return c.lease(ctx, http.MethodPut, rack, r)
}

// ReleaseLease gives a lease back: DELETE /v1/racks/{rack}/lease {holder,
// epoch}.
func (c *Client) ReleaseLease(ctx context.Context, rack string, r wire.LeaseRequest) error {
	_, err := c.call(ctx, http.MethodDelete, "/v1/racks/"+seg(rack)+"/lease", nil, r, nil)
	return err
}

// GetLease reads a rack's current lease: GET /v1/racks/{rack}/lease (404
// when nobody holds it).
func (c *Client) GetLease(ctx context.Context, rack string) (*wire.Lease, error) {
	var out wire.Lease
	if _, err := c.call(ctx, http.MethodGet, "/v1/racks/"+seg(rack)+"/lease", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
