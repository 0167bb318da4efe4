package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/rackfence/rackfence/shared/wire"
)

// SetCredentials stores BMC credentials: PUT /v1/credentials/{name}
// {username, password} (admin).
func (c *Client) SetCredentials(ctx context.Context, name string, cr wire.Credentials) error {
	cr.Name = name
	_, err := c.call(ctx, http.MethodPut, "/v1/credentials/"+seg(name), nil, cr, nil)
	return err
}

// GetCredentials reads a credentials record without its password: GET
// /v1/credentials/{name}.
func (c *Client) GetCredentials(ctx context.Context, name string) (*wire.Credentials, error) {
	var out wire.Credentials
	if _, err := c.call(ctx, http.MethodGet, "/v1/credentials/"+seg(name), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RevealCredentials reads a credentials record with its password: GET
// /v1/credentials/{name}?reveal=true. Only an admin, or an agent of a rack
// whose hosts use them, may; every reveal is audited.
func (c *Client) RevealCredentials(ctx context.Context, name string) (*wire.Credentials, error) {
	var out wire.Credentials
	q := url.Values{wire.ParamReveal: {"true"}}
	if _, err := c.call(ctx, http.MethodGet, "/v1/credentials/"+seg(name), q, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateToken mints a token: POST /v1/tokens {role, rack, ttl, name}
// (admin). An agent token is scoped to r.Rack; r.TTL (a Go duration, ""
// for never) bounds its life. The answer's Token is shown only this once.
func (c *Client) CreateToken(ctx context.Context, r wire.TokenRequest) (*wire.TokenResponse, error) {
	var out wire.TokenResponse
	if _, err := c.call(ctx, http.MethodPost, "/v1/tokens", nil, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListCredentials lists credentials records without passwords: GET
// /v1/credentials, every page (allPages).
func (c *Client) ListCredentials(ctx context.Context) (*wire.List[wire.Credentials], error) {
	return allPages[wire.Credentials](ctx, c, "/v1/credentials", 0)
}
