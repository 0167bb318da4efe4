package client

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http2"
)

// coordTransport is the transport of the project's clients: https://
// requests go over HTTP/2 through golang.org/x/net/http2, whose
// connection pool dials once per address however many requests find no
// connection at the same moment (they wait for that one dial and share
// the connection it makes). net/http's own HTTP/2 dials once per such
// request and keeps one of the connections: 100 watchers opened at once
// by one client cost the coordinator 100 TLS handshakes instead of one.
// Everything else goes through base unchanged: http:// (HTTP/1.1, the
// --insecure-plaintext coordinators), requests through a proxy, and a
// server that does not negotiate HTTP/2 over TLS (a proxy in front of
// the coordinators, say), which base then serves for the rest of the
// client's life.
type coordTransport struct {
	base *http.Transport
	h2   *http2.Transport
	// h1 holds the addresses (host:port) that answered TLS without h2.
	h1 sync.Map
}

// errNoH2 is the dial error of a TLS server that did not choose h2: the
// request goes to base instead.
var errNoH2 = errors.New("the server did not negotiate HTTP/2")

// wantsCoordTransport says whether base would speak HTTP/2 over TLS
// (and may therefore be given coordTransport's): a transport set up for
// HTTP/1.1 only, or with a TLS dialer of its own, is left as it is.
func wantsCoordTransport(base *http.Transport) bool {
	if !base.ForceAttemptHTTP2 || base.TLSNextProto != nil || base.DialTLSContext != nil || base.DialTLS != nil {
		return false
	}
	return base.Protocols == nil || base.Protocols.HTTP2()
}

func newCoordTransport(base *http.Transport) *coordTransport {
	t := &coordTransport{base: base}
	cfg := base.HTTP2
	if cfg == nil {
		cfg = HTTP2Config()
	}
	h2 := &http2.Transport{
		DisableCompression:         base.DisableCompression,
		IdleConnTimeout:            base.IdleConnTimeout,
		ReadIdleTimeout:            cfg.SendPingTimeout,
		PingTimeout:                cfg.PingTimeout,
		WriteByteTimeout:           cfg.WriteByteTimeout,
		StrictMaxConcurrentStreams: cfg.StrictMaxConcurrentRequests,
		DialTLSContext:             t.dialTLS,
	}
	// Offering http/1.1 too lets a server without HTTP/2 answer the
	// handshake (dialTLS then hands the request to base).
	tc := &tls.Config{}
	if base.TLSClientConfig != nil {
		tc = base.TLSClientConfig.Clone()
	}
	tc.NextProtos = []string{http2.NextProtoTLS, "http/1.1"}
	h2.TLSClientConfig = tc
	if n := cfg.MaxEncoderHeaderTableSize; n > 0 {
		h2.MaxEncoderHeaderTableSize = uint32(n)
	}
	if n := cfg.MaxDecoderHeaderTableSize; n > 0 {
		h2.MaxDecoderHeaderTableSize = uint32(n)
	}
	if n := cfg.MaxReadFrameSize; n > 0 {
		h2.MaxReadFrameSize = uint32(n)
	}
	if n := base.MaxResponseHeaderBytes; n > 0 && n < 1<<32 {
		h2.MaxHeaderListSize = uint32(n)
	}
	t.h2 = h2
	return t
}

// RoundTrip implements http.RoundTripper.
func (t *coordTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "https" || t.proxied(req) {
		return t.base.RoundTrip(req)
	}
	addr := hostPort(req.URL.Host)
	if _, ok := t.h1.Load(addr); ok {
		return t.base.RoundTrip(req)
	}
	resp, err := t.h2.RoundTrip(req)
	if err == nil || !errors.Is(err, errNoH2) {
		return resp, err
	}
	// Nothing was sent: the request goes again, over base.
	t.h1.Store(addr, true)
	if req.Body != nil && req.Body != http.NoBody {
		if req.GetBody == nil {
			return nil, err
		}
		body, gerr := req.GetBody()
		if gerr != nil {
			return nil, err
		}
		req = req.Clone(req.Context())
		req.Body = body
	}
	return t.base.RoundTrip(req)
}

// CloseIdleConnections drops both transports' idle connections (after a
// client certificate changed: certs.go).
func (t *coordTransport) CloseIdleConnections() {
	t.base.CloseIdleConnections()
	t.h2.CloseIdleConnections()
}

func (t *coordTransport) proxied(req *http.Request) bool {
	if t.base.Proxy == nil {
		return false
	}
	u, err := t.base.Proxy(req)
	return err != nil || u != nil
}

// dialTLS dials addr with base's dialer (a test's or a network
// namespace's) and shakes hands with cfg, within base's
// TLSHandshakeTimeout.
func (t *coordTransport) dialTLS(ctx context.Context, network, addr string, cfg *tls.Config) (net.Conn, error) {
	dial := t.base.DialContext
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	raw, err := dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if d := t.base.TLSHandshakeTimeout; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	conn := tls.Client(raw, cfg)
	if err := conn.HandshakeContext(ctx); err != nil {
		raw.Close()
		var rh tls.RecordHeaderError
		if errors.As(err, &rh) && string(rh.RecordHeader[:]) == "HTTP/" {
			// A plain HTTP server (--insecure-plaintext): what net/http
			// says of it, which explainTLS completes.
			return nil, http.ErrSchemeMismatch
		}
		return nil, err
	}
	if p := conn.ConnectionState().NegotiatedProtocol; p != http2.NextProtoTLS {
		conn.Close()
		return nil, errNoH2
	}
	return conn, nil
}

// hostPort is host with the https port when it names none.
func hostPort(host string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), "443")
}
