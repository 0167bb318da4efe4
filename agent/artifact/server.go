// Package artifact is the rack agent's artifact server: what the rack's
// BMCs fetch as virtual media from the agent instead of from across sites.
//
//   - Config drives the agent built (agent/configdrive), at
//     /drives/TOKEN/config-2.iso with a random 256-bit token per host: they
//     hold user data, so their URLs are unguessable, never listed, and
//     removed when the host is deprovisioned, detached or deleted.
//   - Optionally (a cache directory) images by checksum, at
//     /images/ALGO-HEX/NAME: the first request fetches the image from its
//     origin once (concurrent requests wait for the same fetch), verifies it
//     against the spec's checksum and only then serves it; least recently
//     used images are evicted to stay within the cache size.
//
// Both are served with http.ServeContent (Range requests, HEAD), which
// BMCs use to read virtual media.
package artifact

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultFetchTimeout bounds one fetch of an image from its origin.
const DefaultFetchTimeout = time.Hour

// Config configures a Server.
type Config struct {
	// BaseURL is the server's URL as the BMCs reach it (required):
	// http(s)://HOST:PORT, no path or a path prefix.
	BaseURL string
	// CacheDir holds cached images; "" turns the image cache off.
	CacheDir string
	// CacheSize bounds the cached images' bytes (required with CacheDir).
	CacheSize int64
	// Origin fetches images from their origin (default: a client without
	// a total timeout; FetchTimeout bounds each fetch).
	Origin *http.Client
	// FetchTimeout bounds one origin fetch (DefaultFetchTimeout when zero).
	FetchTimeout time.Duration
	// Registerer receives the metrics; nil leaves them unregistered.
	Registerer prometheus.Registerer
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
}

// Server serves config drives and cached images. It is an http.Handler.
type Server struct {
	cfg   Config
	base  string
	log   *slog.Logger
	m     *metrics
	stop  context.Context
	close context.CancelFunc

	mu     sync.Mutex
	drives driveTable
	cache  *cache // nil without CacheDir
}

// New checks cfg and returns a Server (reading what the cache directory
// already holds).
func New(cfg Config) (*Server, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("artifact URL %q is not an http:// or https:// URL the BMCs can reach (--artifact-url)", cfg.BaseURL)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Origin == nil {
		cfg.Origin = &http.Client{}
	}
	if cfg.FetchTimeout <= 0 {
		cfg.FetchTimeout = DefaultFetchTimeout
	}
	s := &Server{cfg: cfg, base: strings.TrimRight(cfg.BaseURL, "/"), log: cfg.Logger, m: newMetrics(cfg.Registerer)}
	s.drives.init()
	s.stop, s.close = context.WithCancel(context.Background())
	if cfg.CacheDir != "" {
		if cfg.CacheSize <= 0 {
			return nil, fmt.Errorf("image cache size %d: give a positive size with the cache directory (--image-cache-size)", cfg.CacheSize)
		}
		c, err := openCache(s, cfg.CacheDir, cfg.CacheSize)
		if err != nil {
			return nil, err
		}
		s.cache = c
	}
	return s, nil
}

// BaseURL is the server's URL as the BMCs reach it.
func (s *Server) BaseURL() string { return s.base }

// CacheOn reports whether images are cached.
func (s *Server) CacheOn() bool { return s.cache != nil }

// Close cancels the origin fetches in flight and releases the cache
// directory.
func (s *Server) Close() {
	s.close()
	if s.cache != nil {
		s.cache.lock.Close()
	}
}

// ServeHTTP serves GET and HEAD of drives and cached images; anything else
// is 404 (nothing is listed) or 405.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/drives/"):
		s.serveDrive(w, r, strings.TrimPrefix(p, "/drives/"))
	case strings.HasPrefix(p, "/images/") && s.cache != nil:
		s.serveImage(w, r, strings.TrimPrefix(p, "/images/"))
	default:
		http.NotFound(w, r)
	}
}

// countingWriter counts the body bytes sent, in n and, as they go (a
// 1 GiB read shows in the metric while it runs), in served.
type countingWriter struct {
	http.ResponseWriter
	n      int64
	served prometheus.Counter
	status int   // 0: no WriteHeader (200 on the first Write)
	err    error // the first write error (the client went away)
}

func (c *countingWriter) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

// complete reports whether a 200 or 206 answer went out in full: every
// byte its Content-Length announced (a multipart answer, which has none,
// every byte written) with no write error.
func (c *countingWriter) complete() bool {
	if c.status != 0 && c.status != http.StatusOK && c.status != http.StatusPartialContent {
		return false
	}
	if c.err != nil || c.n == 0 {
		return false
	}
	if cl := c.Header().Get("Content-Length"); cl != "" {
		want, err := strconv.ParseInt(cl, 10, 64)
		return err == nil && want == c.n
	}
	return true
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	if err != nil && c.err == nil {
		c.err = err
	}
	c.n += int64(n)
	if c.served != nil {
		c.served.Add(float64(n))
	}
	return n, err
}

// httpStatus is the status an error of ensure answers a BMC with.
func httpStatus(err error) int {
	switch {
	case errors.Is(err, errUnknown):
		return http.StatusNotFound
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable
	}
	return http.StatusBadGateway
}
