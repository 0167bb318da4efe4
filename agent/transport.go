package agent

import (
	"crypto/tls"
	"net/http"

	"github.com/rackfence/rackfence/shared/client"
)

// CoordinatorConns bounds the connections an agent holds to one
// coordinator member: one for the watch's long poll, one for lease
// renewals and credential reads, StatusWriters for status writes. Each
// connection costs the coordinator a goroutine and two bufio buffers
// (8 KiB); without this bound every busy worker keeps a connection of its
// own (3,868 connections for 40 agents, measured).
const CoordinatorConns = 4

// CoordinatorTransport is the HTTP transport of every call an agent makes
// to the coordinator. tlsConfig (nil: plain HTTP) is the agent's TLS
// client configuration: CA pin, client certificate. Over TLS the
// transport negotiates HTTP/2 (ForceAttemptHTTP2), which multiplexes every
// call on one connection; over plain HTTP/1.1 it keeps a pool of at most
// CoordinatorConns, and requests beyond it wait for a free connection.
func CoordinatorTransport(tlsConfig *tls.Config) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsConfig
	tr.ForceAttemptHTTP2 = true
	// Pings on a silent connection; no dynamic header table, so the
	// coordinator stores none for this connection.
	tr.HTTP2 = client.HTTP2Config()
	tr.MaxConnsPerHost = CoordinatorConns
	tr.MaxIdleConnsPerHost = CoordinatorConns
	// Several members (failover) each get their own bound.
	tr.MaxIdleConns = 4 * CoordinatorConns
	return tr
}
