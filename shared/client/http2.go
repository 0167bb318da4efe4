package client

import (
	"net/http"
	"time"
)

// Defaults of HTTP2Config.
const (
	// DefaultPingAfter is how long an HTTP/2 connection may stay silent
	// before the client pings it; DefaultPingTimeout how long the ping's
	// answer may take before the connection is dropped.
	DefaultPingAfter   = 5 * time.Second
	DefaultPingTimeout = 3 * time.Second
)

// HTTP2Config is the HTTP/2 configuration of every transport the
// project's programs reach a coordinator with (this package's clients:
// rackfencectl, agents).
//
//   - HTTP/2 multiplexes every request on one connection: a link that
//     stalls silently would hold all of them until their timeouts. A ping
//     after DefaultPingAfter without a frame, answered within
//     DefaultPingTimeout or the connection is dropped, bounds that; the
//     next request then dials afresh (and, never having reached a member,
//     may fail over).
//   - The encoder keeps no dynamic header table (1 byte holds no entry):
//     headers travel as Huffman-coded literals, and the coordinator's
//     decoder, which must accept the protocol's default 4 KiB table,
//     stores nothing for this connection. An agent's headers change at
//     every watch (the index is in the path), so a table saved little.
func HTTP2Config() *http.HTTP2Config {
	return &http.HTTP2Config{SendPingTimeout: DefaultPingAfter, PingTimeout: DefaultPingTimeout, MaxEncoderHeaderTableSize: 1}
}
