package client

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/rackfence/rackfence/shared/wire"
)

// flexList decodes the wire.List envelope and, for robustness, a bare JSON
// array too (index 0).
type flexList[T any] struct{ wire.List[T] }

func (l *flexList[T]) UnmarshalJSON(b []byte) error {
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '[' {
		return json.Unmarshal(b, &l.Items)
	}
	return json.Unmarshal(b, &l.List)
}

func getList[T any](ctx context.Context, c *Client, path string, q url.Values) (*wire.List[T], error) {
	var l flexList[T]
	if _, err := c.call(ctx, http.MethodGet, path, q, nil, &l); err != nil {
		return nil, err
	}
	if l.Items == nil {
		l.Items = []T{}
	}
	return &l.List, nil
}
