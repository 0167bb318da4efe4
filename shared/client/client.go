// Package client is the Go client of rackfence's HTTP API v1. The
// coordinator's followers, the rack agent, the pivot and rackfencectl all
// talk to the coordinator through it.
//
// A Client knows several member URLs and fails over to the next on a
// connection error, retries 503 (no leader) honouring Retry-After within a
// bound, and follows 307/308 redirects itself so the Authorization header
// reaches the new host. Errors the coordinator answered are *Error; when no
// member answered at all the error wraps ErrUnreachable.
package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rackfence/rackfence/internal/version"
	"github.com/rackfence/rackfence/shared/wire"
)

// Defaults of Config.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultRetryFor     = 30 * time.Second
	DefaultMaxRedirects = 5
	// DefaultCoordinator is the coordinator URL rackfencectl and
	// rackfence-agent use when --coordinator is not given: a member on
	// this machine, over TLS (coordinator.DefaultHTTPAddr).
	DefaultCoordinator = "https://127.0.0.1:7480"
	// maxErrorBody bounds how much of an error answer is read.
	maxErrorBody = 1 << 20
)

// Config says how to reach the coordinator cluster.
type Config struct {
	// Coordinator is one or more member URLs, comma-separated
	// ("https://10.0.0.1:7480,https://10.0.0.2:7480"). Required.
	Coordinator string
	// Token is sent as "Authorization: Bearer TOKEN". Empty sends none
	// (only /v1/health and /metrics answer without one).
	Token string
	// UserAgent is sent with every request; default "rackfence-client/VERSION" (internal/version).
	UserAgent string
	// Timeout bounds one HTTP request (each attempt), except Watch, which is
	// bounded by its own timeout plus Timeout. Default 30s.
	Timeout time.Duration
	// RetryFor bounds the total time spent retrying a 503 (no leader) or
	// failing over across members before giving up. Default 30s; a negative
	// value disables retries (one attempt per member).
	RetryFor time.Duration
	// Stale makes reads ask for ?stale=true: any member answers from its
	// local state without confirming leadership (faster, may lag).
	Stale bool
	// HTTPClient is the underlying client (TLS settings, client
	// certificates). Its CheckRedirect is replaced: redirects are followed
	// by this package. Default: a client with http.DefaultTransport.
	HTTPClient *http.Client
	// Logger receives debug logs of failovers and retries; default discards.
	Logger *slog.Logger

	// CAFile is the cluster CA (PEM, e.g. a member's DATA/tls/ca.crt) to
	// trust for https:// members. Without it, a CA pinned by CAFingerprint
	// or by the token text (wire.ParseToken) is trusted, else the system's
	// roots.
	CAFile string
	// CAFingerprint pins the cluster CA by its SHA-256 (64 hex digits);
	// default: the pin the token text carries.
	CAFingerprint string
	// ClientCertificate, when set, supplies the client certificate (an
	// agent's, which the coordinator requires with an agent token).
	ClientCertificate func(*tls.CertificateRequestInfo) (*tls.Certificate, error)
}

// Client calls the API. It is safe for concurrent use.
type Client struct {
	urls     []*url.URL
	token    *atomic.Pointer[string] // shared by copies; see SetToken
	ua       string
	timeout  time.Duration
	retryFor time.Duration
	stale    bool
	hc       *http.Client
	log      *slog.Logger
	// cur is the index of the member that answered last; requests start
	// there. Shared between copies made by WithStale.
	cur *atomic.Int32
}

// New checks cfg and returns a client. It does not contact the coordinator.
func New(cfg Config) (*Client, error) {
	urls, err := ParseURLs(cfg.Coordinator)
	if err != nil {
		return nil, err
	}
	secret, pin := wire.ParseToken(cfg.Token)
	if cfg.CAFingerprint != "" {
		pin = cfg.CAFingerprint
	}
	c := &Client{
		urls:     urls,
		token:    newTokenRef(secret),
		ua:       cfg.UserAgent,
		timeout:  cfg.Timeout,
		retryFor: cfg.RetryFor,
		stale:    cfg.Stale,
		log:      cfg.Logger,
		cur:      new(atomic.Int32),
	}
	if c.ua == "" {
		c.ua = version.UserAgent("rackfence-client")
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.retryFor == 0 {
		c.retryFor = DefaultRetryFor
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	hc := http.Client{}
	if cfg.HTTPClient != nil {
		hc = *cfg.HTTPClient
	}
	if err := setTLS(&hc, cfg.CAFile, pin, cfg.ClientCertificate); err != nil {
		return nil, err
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	hc.Timeout = 0 // per attempt, through the context
	c.hc = &hc
	return c, nil
}

// ParseURLs splits a comma-separated list of member URLs and checks each.
// A URL without a scheme gets https:// (coordinators serve TLS unless
// started with --insecure-plaintext).
func ParseURLs(s string) ([]*url.URL, error) {
	var out []*url.URL
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !strings.Contains(part, "://") {
			part = "https://" + part
		}
		u, err := url.Parse(part)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("coordinator URL %q is not valid: use http://HOST:PORT or https://HOST:PORT, several separated by commas", part)
		}
		u.Path = strings.TrimRight(u.Path, "/")
		out = append(out, u)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no coordinator URL given: set --coordinator or RACKFENCE_COORDINATOR (e.g. https://127.0.0.1:7480)")
	}
	return out, nil
}

// ReadTokenFile reads a token file (as written to DATA/admin.token or by
// "rackfencectl token create"), trimming surrounding white space.
func ReadTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read token file: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("token file %s is empty", path)
	}
	return t, nil
}

// URLs returns the member URLs the client knows, in order.
func (c *Client) URLs() []string {
	out := make([]string, len(c.urls))
	for i, u := range c.urls {
		out[i] = u.String()
	}
	return out
}

// WithStale returns a copy of c whose reads ask for ?stale=true (or not).
func (c *Client) WithStale(stale bool) *Client {
	cp := *c
	cp.stale = stale
	return &cp
}

// request is one API call, independent of the member that serves it.
type request struct {
	method string
	path   string // escaped, starting with /v1/
	query  url.Values
	body   []byte
	// timeout overrides c.timeout for this call (watch).
	timeout time.Duration
	// sink, when set, reads a successful (2xx) answer's body instead of
	// it being buffered (a backup). It may be called again on another
	// member after a failed attempt: it must start over each time.
	sink func(io.Reader) error
}

// call sends in (JSON-encoded unless nil) and decodes the answer into out
// (unless nil). It returns the HTTP status of the final answer.
func (c *Client) call(ctx context.Context, method, path string, query url.Values, in, out any) (int, error) {
	r := request{method: method, path: path, query: query}
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, fmt.Errorf("encode request body: %w", err)
		}
		r.body = b
	}
	return c.do(ctx, r, out)
}

func (c *Client) do(ctx context.Context, r request, out any) (int, error) {
	if r.method == http.MethodGet && c.stale {
		q := url.Values{}
		for k, v := range r.query {
			q[k] = v
		}
		q.Set(wire.ParamStale, "true")
		r.query = q
	}
	deadline := time.Now().Add(c.retryFor)
	backoff := 250 * time.Millisecond
	var tried []string
	var lastErr error
	n := len(c.urls)
	for {
		// One pass over every member, starting at the last one that answered.
		start := int(c.cur.Load())
		var busy *answer // the last 503 (no leader) of this pass
		for i := 0; i < n; i++ {
			idx := (start + i) % n
			base := c.urls[idx]
			resp, body, err := c.attempt(ctx, base, r)
			if err != nil {
				if ctx.Err() != nil {
					return 0, ctx.Err()
				}
				if !failoverOK(r.method, err) {
					return 0, fmt.Errorf("%s %s at %s: %w (the request may have been applied; check before repeating it)", r.method, r.path, base.Redacted(), err)
				}
				c.log.Debug("coordinator member unreachable, trying the next", "url", base.Redacted(), "err", err)
				tried = appendOnce(tried, base.Redacted())
				lastErr = err
				var ue *url.Error
				if errors.As(err, &ue) {
					lastErr = ue.Err // the URL is named already
				}
				continue
			}
			if resp.StatusCode == http.StatusServiceUnavailable {
				// This member has no leader; another one may (it could be
				// the one cut off from the majority).
				c.log.Debug("coordinator member has no leader, trying the next", "url", base.Redacted())
				busy = &answer{resp: resp, body: body, base: base}
				continue
			}
			c.cur.Store(int32(idx))
			return resp.StatusCode, decode(resp, body, base, r, out)
		}
		wait := backoff
		if busy != nil {
			wait = retryAfter(busy.resp.Header.Get("Retry-After"), backoff)
		}
		if c.retryFor < 0 || time.Now().Add(wait).After(deadline) {
			if busy != nil {
				// An answer says more than "unreachable".
				return busy.resp.StatusCode, decode(busy.resp, busy.body, busy.base, r, out)
			}
			return 0, &UnreachableError{URLs: tried, Err: lastErr}
		}
		if err := sleep(ctx, wait); err != nil {
			return 0, err
		}
		backoff = min(backoff*2, 2*time.Second)
	}
}

// answer is one member's HTTP answer, body already read.
type answer struct {
	resp *http.Response
	body []byte
	base *url.URL
}

// attempt sends r to one member, following redirects with the headers
// intact. It returns the final response and its body (already read).
func (c *Client) attempt(ctx context.Context, base *url.URL, r request) (*http.Response, []byte, error) {
	timeout := c.timeout
	if r.timeout > 0 {
		timeout = r.timeout
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u := *base
	u.Path = base.Path + r.path
	u.RawPath = ""
	if p, err := url.PathUnescape(u.Path); err == nil && p != u.Path {
		u.RawPath = u.Path
		u.Path = p
	}
	u.RawQuery = r.query.Encode()
	target := &u
	// gotConn records whether a connection was ever handed to a request of
	// this attempt: until then nothing was sent, and any member may be
	// tried (a dial stalled by a silent drop ends as a bare context error).
	var gotConn atomic.Bool
	actx = httptrace.WithClientTrace(actx, &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { gotConn.Store(true) }})
	for hop := 0; ; hop++ {
		req, err := http.NewRequestWithContext(actx, r.method, target.String(), bytes.NewReader(r.body))
		if err != nil {
			return nil, nil, err
		}
		if r.body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Accept", "application/json")
		req.Header.Set("User-Agent", c.ua)
		if tok := *c.token.Load(); tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := c.hc.Do(req)
		if err != nil {
			err = explainTLS(err, target)
			if !gotConn.Load() {
				return nil, nil, &notSentError{err}
			}
			return nil, nil, err
		}
		if (resp.StatusCode == http.StatusTemporaryRedirect || resp.StatusCode == http.StatusPermanentRedirect) && resp.Header.Get("Location") != "" {
			io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
			resp.Body.Close()
			if hop >= DefaultMaxRedirects {
				return nil, nil, fmt.Errorf("more than %d redirects, last to %s", DefaultMaxRedirects, resp.Header.Get("Location"))
			}
			loc, err := target.Parse(resp.Header.Get("Location"))
			if err != nil {
				return nil, nil, fmt.Errorf("redirect to an invalid Location %q: %v", resp.Header.Get("Location"), err)
			}
			c.log.Debug("following redirect", "from", target.Redacted(), "to", loc.Redacted())
			target = loc
			continue
		}
		if r.sink != nil && resp.StatusCode < 300 {
			err := r.sink(resp.Body)
			resp.Body.Close()
			if err != nil {
				return nil, nil, fmt.Errorf("read answer: %w", err)
			}
			return resp, nil, nil
		}
		var rd io.Reader = resp.Body
		if resp.StatusCode >= 300 {
			rd = io.LimitReader(resp.Body, maxErrorBody)
		}
		body, err := io.ReadAll(rd)
		resp.Body.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("read answer: %w", err)
		}
		return resp, body, nil
	}
}

// notSentError is a transport error of a request that never got a
// connection: nothing reached the member.
type notSentError struct{ err error }

func (e *notSentError) Error() string { return e.err.Error() }
func (e *notSentError) Unwrap() error { return e.err }

// failoverOK says whether a transport error may be retried on another
// member. Connection failures (nothing was sent) always may; other errors
// only for reads. A write the client gave up on may still be applied later
// (the member holding it applies or forwards it when the network lets it
// through), so repeating it elsewhere, even an idempotent PUT or DELETE,
// could let the older copy land after a newer write: found by the chaos
// harness (testkit/chaos, seeds 100 and 200).
func failoverOK(method string, err error) bool {
	var op *net.OpError
	var ns *notSentError
	if errors.As(err, &ns) || (errors.As(err, &op) && op.Op == "dial") {
		return true
	}
	return method == http.MethodGet || method == http.MethodHead
}

func decode(resp *http.Response, body []byte, base *url.URL, r request, out any) error {
	if resp.StatusCode >= 300 {
		return newError(resp, body, base, r)
	}
	if out == nil || len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("%s %s at %s: the answer is not the expected JSON (%v); is %s a rackfence coordinator?", r.method, r.path, base.Redacted(), err, base.Redacted())
	}
	return nil
}

// retryAfter reads a Retry-After header (seconds or an HTTP date), falling
// back to def, and caps the wait at 10s.
func retryAfter(h string, def time.Duration) time.Duration {
	d := def
	if h != "" {
		if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && s >= 0 {
			d = time.Duration(s) * time.Second
		} else if t, err := http.ParseTime(h); err == nil {
			d = time.Until(t)
		}
	}
	if d < 50*time.Millisecond {
		d = 50 * time.Millisecond
	}
	return min(d, 10*time.Second)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func appendOnce(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// seg escapes one path segment.
func seg(s string) string { return url.PathEscape(s) }
