// Package api serves rackfence's HTTP API v1 (CONTRACT.md) on top of a
// coordinator.Store: echo handlers, bearer-token auth, forwarding to the
// leader, the long-poll watch and /metrics.
package api

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/coordinator/pivot"
)

// Config configures a Server.
type Config struct {
	// Store is the member this server answers for.
	Store *coordinator.Store
	// Tier is this cluster's tier name (GET /v1/status).
	Tier string
	// PeerTiers maps other tiers' names to their API URLs (--peer-tier).
	PeerTiers map[string]string
	// PeerTokenFiles maps tier names to token files (--peer-token-file).
	PeerTokenFiles map[string]string
	// Logger receives structured logs; nil = slog.Default().
	Logger *slog.Logger
	// Registry receives the HTTP metrics and serves /metrics; nil = a new
	// registry with the Go and process collectors.
	Registry *prometheus.Registry
	// ProxyTLS is the client TLS config used to forward to the leader when
	// the cluster serves HTTPS; nil for plain HTTP.
	ProxyTLS *tls.Config
	// Pivot hands hosts to and admits them from peer tiers; nil when no
	// --peer-tier is configured (handoffs are then refused).
	Pivot *pivot.Peers
	// WatchTimeout is the longest a watch blocks (default 30s); a
	// ?timeout= shorter than this is honoured.
	WatchTimeout time.Duration
}

// Server is the HTTP API of one coordinator member.
type Server struct {
	cfg       Config
	store     *coordinator.Store
	log       *slog.Logger
	echo      *echo.Echo
	transport *http.Transport
	reqs      *prometheus.CounterVec
}

// New builds the server and its routes.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	if cfg.WatchTimeout <= 0 {
		cfg.WatchTimeout = 30 * time.Second
	}
	s := &Server{cfg: cfg, store: cfg.Store, log: cfg.Logger}
	s.transport = &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 512,
		IdleConnTimeout:     90 * time.Second,
		TLSClientConfig:     cfg.ProxyTLS,
	}
	s.reqs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rackfence_http_requests_total",
		Help: "HTTP requests answered by this member, by route, method and status code.",
	}, []string{"route", "method", "code"})
	cfg.Registry.MustRegister(s.reqs)

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.errorHandler
	e.Use(s.countRequests)
	e.Use(s.recoverPanics)
	s.echo = e
	s.routes()
	return s
}

// Handler is the server's http.Handler.
func (s *Server) Handler() http.Handler { return s.echo }

func (s *Server) routes() {
	e := s.echo
	e.GET("/v1/health", s.health)
	e.GET("/v1/openapi.json", s.openAPI)
	e.GET("/metrics", echo.WrapHandler(promhttp.HandlerFor(s.cfg.Registry, promhttp.HandlerOpts{})))

	// Answered locally by every member.
	local := e.Group("/v1", s.localAuth)
	local.GET("/status", s.status)
	local.GET("/cluster/members", s.members)

	// Forwarded to the leader unless ?stale=true on a GET.
	v1 := e.Group("/v1", s.forward, s.authMiddleware)
	v1.GET("/hosts", s.listHosts)
	v1.GET("/hosts/:name", s.getHost)
	v1.PUT("/hosts/:name", s.putHost)
	v1.DELETE("/hosts/:name", s.deleteHost)
	v1.POST("/hosts/:name/intents/:kind", s.postIntent)
	v1.DELETE("/hosts/:name/intents/:kind", s.deleteIntent)
	v1.GET("/hosts/:name/events", s.events)
	v1.PUT("/hosts/:name/status", s.putStatus)
	v1.POST("/hosts/:name/pivot", s.pivotHost)
	v1.GET("/credentials", s.listCredentials)
	v1.GET("/credentials/:name", s.getCredentials)
	v1.PUT("/credentials/:name", s.putCredentials)
	v1.POST("/tokens", s.createToken)
	v1.GET("/racks", s.listRacks)
	v1.GET("/racks/:rack/lease", s.getLease)
	v1.POST("/racks/:rack/lease", s.acquireLease)
	v1.PUT("/racks/:rack/lease", s.renewLease)
	v1.DELETE("/racks/:rack/lease", s.releaseLease)
	v1.GET("/racks/:rack/leases", s.leaseHistory)
	v1.GET("/watch", s.watch)
	v1.POST("/cluster/join", s.join)
	v1.DELETE("/cluster/members/:id", s.removeMember)
}

// countRequests counts answers by route and code; it runs the error
// handler itself so the code is known.
func (s *Server) countRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := next(c); err != nil {
			c.Error(err)
		}
		route := c.Path()
		if route == "" {
			route = "unmatched"
		}
		s.reqs.WithLabelValues(route, c.Request().Method, itoa(c.Response().Status)).Inc()
		return nil
	}
}

// recoverPanics turns a handler panic into a 500 "internal" answer; the
// stack goes to the log, never to the client. (echo's own middleware
// package needs golang.org/x/time, which this module does not pin.)
func (s *Server) recoverPanics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				if r == http.ErrAbortHandler {
					panic(r)
				}
				s.log.Error("handler panicked", "method", c.Request().Method, "route", c.Path(), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = errors.New("panic in handler")
			}
		}()
		return next(c)
	}
}

func itoa(n int) string {
	if n >= 100 && n < 600 {
		return string([]byte{byte('0' + n/100), byte('0' + n/10%10), byte('0' + n%10)})
	}
	return "other"
}
