package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/rackfence/rackfence/shared/api"
)

// SetCredentials stores BMC credentials: PUT /v1/credentials/{name}
// {username, password} (admin).
func (c *Client) SetCredentials(ctx context.Context, name string, cr api.Credentials) error {
	cr.Name = name
	_, err := c.call(ctx, http.MethodPut, "/v1/credentials/"+seg(name), nil, cr, nil)
	return err
}

// GetCredentials reads a credentials record without its password: GET
// /v1/credentials/{name}.
func (c *Client) GetCredentials(ctx context.Context, name string) (*api.Credentials, error) {
	var out api.Credentials
	if _, err := c.call(ctx, http.MethodGet, "/v1/credentials/"+seg(name), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RevealCredentials reads a credentials record with its password: GET
// /v1/credentials/{name}?reveal=true. Only an admin, or an agent of a rack
// whose hosts use them, may; every reveal is audited.
func (c *Client) RevealCredentials(ctx context.Context, name string) (*api.Credentials, error) {
	var out api.Credentials
	q := url.Values{api.ParamReveal: {"true"}}
	if _, err := c.call(ctx, http.MethodGet, "/v1/credentials/"+seg(name), q, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateToken mints a token: POST /v1/tokens {role, rack, ttl, name}
// (admin). An agent token is scoped to r.Rack; r.TTL (a Go duration, ""
// for never) bounds its life. The answer's Token is shown only this once.
func (c *Client) CreateToken(ctx context.Context, r api.TokenRequest) (*api.TokenResponse, error) {
	var out api.TokenResponse
	if _, err := c.call(ctx, http.MethodPost, "/v1/tokens", nil, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListCredentials lists credentials records without passwords: GET
// /v1/credentials.
func (c *Client) ListCredentials(ctx context.Context) (*api.List[api.Credentials], error) {
	return getList[api.Credentials](ctx, c, "/v1/credentials", nil)
}
