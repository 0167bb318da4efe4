package main

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// serveAPI serves h on ln (over TLS when tlsServer is
// set) until the returned server is shut down; a serving error other than
// the shutdown arrives on the channel.
func serveAPI(ln net.Listener, h http.Handler, tlsServer *tls.Config, log *slog.Logger) (*http.Server, <-chan error) {
	hs := &http.Server{Handler: h, TLSConfig: tlsServer,
		// A client has 10 s to send its headers (TLS handshake included)
		// and 64 KiB of them; idle keep-alive connections close after 2
		// min. No write timeout: the watch long-polls for up to 30 s.
		ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second, MaxHeaderBytes: 64 << 10,
		HTTP2: http2Config(), ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	errc := make(chan error, 1)
	go func() {
		var err error
		if tlsServer != nil {
			err = hs.ServeTLS(ln, "", "")
		} else {
			err = hs.Serve(ln)
		}
		if !errors.Is(err, http.ErrServerClosed) {
			errc <- err
		}
	}()
	return hs, errc
}

// http2Config sizes what the API keeps per HTTP/2 connection. Every agent
// holds one connection for as long as it runs, so at 100 hosts per agent
// this memory is a share of the coordinator's RSS per host:
//
//   - The server's encoder keeps no dynamic header table (a table of 1
//     byte holds no entry): answers' headers travel as literals. The
//     server alone decides what its encoder stores.
//   - The decoder's table stays at the protocol's default 4 KiB. A client
//     may compress with a 4 KiB table until it has received and
//     acknowledged the server's SETTINGS (RFC 9113 §4.3.1, §6.5.3), and
//     Go's server shrinks its decoder the moment it sends them: with a
//     1-byte decoder table, requests sent at once on a new connection
//     referred to entries the server had not kept, and it closed the
//     connection (COMPRESSION_ERROR). The project's own clients
//     (shared/client: agents, rackfencectl) set their encoder's table to 1
//     byte, so the decoder stores no entry for them; an outside client
//     costs its connection up to 4 KiB of entries.
//   - Frames read of at most 16 KiB (the protocol's minimum; Go's default
//     is 1 MiB). A connection's read buffer grows to the largest frame it
//     read and keeps it, and Go's client sends a body in frames as large
//     as the server allows (up to 512 KiB): one large rack report left
//     its connection holding a buffer that large. Larger bodies now
//     arrive in more frames.
func http2Config() *http.HTTP2Config {
	return &http.HTTP2Config{MaxEncoderHeaderTableSize: 1, MaxReadFrameSize: 16 << 10}
}
