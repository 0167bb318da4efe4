package client

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/rackfence/rackfence/shared/api"
)

// TestErrorMatchesWireSentinels: an answer's *Error matches the shared/api
// sentinel of its code through any wrapping, whether the code came in a
// rackfence error body or was derived from a bare status (a proxy's page).
func TestErrorMatchesWireSentinels(t *testing.T) {
	base, _ := url.Parse("https://127.0.0.1:8443")
	cases := []struct {
		status int
		body   string
		want   *api.WireError
		not    *api.WireError
	}{
		{409, `{"error":{"code":"stale_epoch","message":"epoch 3 is not current"}}`, api.ErrStaleEpoch, api.ErrConflict},
		{503, `{"error":{"code":"secrets_key_missing","message":"no key k1"}}`, api.ErrSecretsKeyMissing, api.ErrNoLeader},
		{404, `<html>nothing here</html>`, api.ErrNotFound, api.ErrInternal},
		{429, `slow down`, api.ErrTooManyRequests, api.ErrInternal},
		{502, `bad gateway`, api.ErrInternal, api.ErrNoLeader},
	}
	for _, c := range cases {
		e := newError(&http.Response{StatusCode: c.status}, []byte(c.body), base, request{method: "GET", path: "/v1/hosts/h1"})
		err := fmt.Errorf("reconcile: %w", e)
		if !errors.Is(err, c.want) {
			t.Errorf("%d %s: code %s does not match %s", c.status, c.body, e.Code, c.want.Code)
		}
		if errors.Is(err, c.not) {
			t.Errorf("%d %s: code %s matches %s", c.status, c.body, e.Code, c.not.Code)
		}
	}
}
