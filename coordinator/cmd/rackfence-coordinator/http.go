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
//   - No dynamic header tables (a table of 1 byte holds no entry). With
//     the default 4 KiB each way, HPACK's tables held about 14 KiB per
//     connection, 1.4 MB for 100 agents, and an agent's headers change
//     at every watch (the index in the path) so they were mostly evicted
//     anyway. A request's headers now travel as Huffman-coded literals
//     instead of table indexes.
//   - Frames read of at most 16 KiB (the protocol's minimum; Go's default
//     is 1 MiB). A connection's read buffer grows to the largest frame it
//     read and keeps it, and Go's client sends a body in frames as large
//     as the server allows (up to 512 KiB): one large rack report left
//     its connection holding a buffer that large. Larger bodies now
//     arrive in more frames.
func http2Config() *http.HTTP2Config {
	return &http.HTTP2Config{MaxDecoderHeaderTableSize: 1, MaxEncoderHeaderTableSize: 1, MaxReadFrameSize: 16 << 10}
}
