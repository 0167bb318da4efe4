package bmc

import (
	"context"
	"io"
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
	// gofish marks every request Close (a connection per request) unless it
	// built the transport itself; the Conn's transport keeps connections
	// instead (see baseTransport): a dial, a close and, over TLS, a
	// handshake per request were 40 % of an agent's CPU at 1,000 hosts.
	r.Close = false
	if ua != "" {
		r.Header.Set("User-Agent", ua)
	}
	resp, err := t.base.RoundTrip(r)
	if err == nil {
		resp.Body = drainOnClose{resp.Body}
	}
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

// drainOnClose reads what is left of a body (up to drainLimit) before
// closing it: a body closed unread closes its connection, and gofish
// closes some unread (the session login's), which cost a dial per login.
type drainOnClose struct{ io.ReadCloser }

const drainLimit = 64 << 10

func (b drainOnClose) Close() error {
	_, _ = io.Copy(io.Discard, io.LimitReader(b.ReadCloser, drainLimit))
	return b.ReadCloser.Close()
}
