package bmc

import (
	"context"
	"net/http"
	"sync"
)

// callTransport is the http.RoundTripper under one Conn's gofish client
// (Redfish; for IPMI it is unused). gofish sends every request with the
// context it was connected with (we give it a background one) and a fixed
// User-Agent, so cancelling the caller's context would not abort it. The Conn installs the current call's context
// and User-Agent here before each call; every request is re-issued under
// that context (so the call's deadline and a lost lease abort it) and
// carries the agent's User-Agent. It also records what the BMC answered,
// which the error classifier reads (gofish's errors are text with a code,
// and a call makes several requests: the statuses tell which failed how).
type callTransport struct {
	base http.RoundTripper

	mu   sync.Mutex
	ctx  context.Context
	ua   string
	seen observed
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

// snapshot is what the current call has seen so far.
func (t *callTransport) snapshot() observed {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.seen
}
