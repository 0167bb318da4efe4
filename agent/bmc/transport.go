package bmc

import (
	"context"
	"net/http"
	"sync"
)

// callTransport is the http.RoundTripper under one Conn's bmclib client.
// bmclib's Redfish provider (gofish) sends every request with its own
// background context and a fixed User-Agent, so cancelling the caller's
// context would not abort it. The Conn installs the current call's context
// and User-Agent here before each call; every request is re-issued under
// that context (so the call's deadline and a lost lease abort it) and
// carries the agent's User-Agent. It also records what the BMC answered,
// which the error classifier reads, since bmclib flattens errors to text.
type callTransport struct {
	base http.RoundTripper

	mu    sync.Mutex
	ctx   context.Context
	ua    string
	seen  observed
	token string // the Redfish session token bmclib logged in with
}

// observed is what the transport saw during one call.
type observed struct {
	requests   int
	lastStatus int   // last non-2xx status, 0 if none
	authFailed bool  // some answer was 401 or 403
	netErr     error // last transport-level error
}

func (t *callTransport) begin(ctx context.Context, ua string) {
	t.mu.Lock()
	t.ctx, t.ua, t.seen = ctx, ua, observed{}
	t.mu.Unlock()
}

func (t *callTransport) end() observed {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.seen
	t.ctx = nil
	return s
}

func (t *callTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.mu.Lock()
	ctx, ua := t.ctx, t.ua
	t.mu.Unlock()
	if ctx == nil {
		ctx = req.Context()
	}
	r := req.Clone(ctx)
	if ua != "" {
		r.Header.Set("User-Agent", ua)
	}
	resp, err := t.base.RoundTrip(r)
	t.mu.Lock()
	if tok := req.Header.Get("X-Auth-Token"); tok != "" {
		t.token = tok
	}
	if err == nil && resp.StatusCode == http.StatusCreated {
		if tok := resp.Header.Get("X-Auth-Token"); tok != "" {
			t.token = tok
		}
	}
	t.seen.requests++
	if err != nil {
		t.seen.netErr = err
	} else if resp.StatusCode >= 300 {
		t.seen.lastStatus = resp.StatusCode
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			t.seen.authFailed = true
		}
	}
	t.mu.Unlock()
	return resp, err
}

// sessionToken is the token of bmclib's current Redfish session, "" if
// none was seen (not logged in yet, or basic auth).
func (t *callTransport) sessionToken() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.token
}

// authRefused reports whether the current call saw a 401/403.
func (t *callTransport) authRefused() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.seen.authFailed
}
