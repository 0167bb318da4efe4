package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/rackfence/rackfence/shared/wire"
)

func newTokenRef(tok string) *atomic.Pointer[string] {
	p := new(atomic.Pointer[string])
	t := strings.TrimSpace(tok)
	p.Store(&t)
	return p
}

// SetToken replaces the token sent with every later request, at once and
// safely while requests run (an agent re-reading its rotated token file).
// Copies made by WithStale share it.
func (c *Client) SetToken(tok string) {
	t, _ := wire.ParseToken(tok) // only the secret is sent; a pin is for TLS at New
	c.token.Store(&t)
}

// RevokeToken revokes the token with public ID id: DELETE /v1/tokens/{id}
// (admin). Every member refuses the token once it applied the revocation.
// The last valid admin token cannot be revoked (409).
func (c *Client) RevokeToken(ctx context.Context, id string) (*wire.Token, error) {
	var out wire.Token
	if _, err := c.call(ctx, http.MethodDelete, "/v1/tokens/"+seg(id), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Audit reads the newest limit records (0: the server's default, 100; at
// most 1000: AuditPages reads further) of the audit trail of the member
// that answers: GET /v1/audit (admin). Each member keeps its own; point a
// client at one member to read its trail.
func (c *Client) Audit(ctx context.Context, limit int) (*wire.List[wire.AuditRecord], error) {
	q := url.Values{}
	if limit > 0 {
		q.Set(wire.ParamLimit, strconv.Itoa(limit))
	}
	return getList[wire.AuditRecord](ctx, c, "/v1/audit", q)
}
