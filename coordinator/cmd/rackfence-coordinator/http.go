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
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
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
