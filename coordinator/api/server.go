// Package api serves rackfence's HTTP API v1 (docs/api.md) on top of a
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
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/coordinator/pivot"
	"github.com/rackfence/rackfence/coordinator/ui"
	"github.com/rackfence/rackfence/internal/jsonl"
)

// Defaults of Config.
const (
	DefaultWatchTimeout   = 30 * time.Second
	DefaultAuthFailLimit  = 10
	DefaultAuthFailWindow = time.Minute
)

// Config configures a Server.
type Config struct {
	// Store is the member this server answers for (a *coordinator.Store;
	// see store.go).
	Store Store
	// State is the member's replicated state the reads answer from (see
	// state.go); nil: the state machine of Store, which must then be a
	// *coordinator.Store.
	State State
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
	// ElectionTime is how long electing a leader can take in this cluster
	// (coordinator.Config.ElectionTime; its value for raft's defaults when
	// zero). A forward to the leader waits at most this long for a
	// connection, and ends when this member stops following the leader it
	// was sent to, which it notices within this time.
	ElectionTime time.Duration
	// Pivot hands hosts to and admits them from peer tiers; nil when no
	// --peer-tier is configured (handoffs are then refused).
	Pivot *pivot.Peers
	// TLS is this member's CA and certificate; nil under
	// --insecure-plaintext (then /v1/status warns, no certificates are
	// issued and agent tokens need no client certificate).
	TLS *TLSConfig
	// WatchWriteTimeout bounds the writing of one watch answer: a watcher
	// that does not take it in time is cut off (default 10s).
	WatchWriteTimeout time.Duration
	// WatchTimeout is the longest a watch blocks (DefaultWatchTimeout); a
	// ?timeout= shorter than this is honoured.
	WatchTimeout time.Duration
	// CAPin is the hex SHA-256 of the cluster CA certificate; when set,
	// POST /v1/tokens answers token text that pins it
	// (rf1-<pin>-<secret>, shared/wire/token.go).
	CAPin string
	// AuthFailLimit failed authentications from one client address within
	// AuthFailWindow make this member answer 429 to that address until
	// the window ends (DefaultAuthFailLimit and DefaultAuthFailWindow; a
	// negative limit disables it).
	AuthFailLimit  int
	AuthFailWindow time.Duration
	// AuditFile is this member's audit trail (default DATA/audit.log,
	// mode 0600); AuditMaxBytes the size at which it is rotated to
	// AuditFile.1 (default 10 MiB).
	AuditFile     string
	AuditMaxBytes int64
}

// Server is the HTTP API of one coordinator member.
type Server struct {
	cfg       Config
	store     Store
	state     State
	log       *slog.Logger
	echo      *echo.Echo
	transport *http.Transport
	leaders   *leaderWatch // ends forwards to a leader this member no longer follows
	reqs      *prometheus.CounterVec

	forwardFailures *prometheus.CounterVec

	limiter      *authLimiter
	authFailures *prometheus.CounterVec
	rateLimited  prometheus.Counter
	auditLog     *jsonl.Writer // the member's audit file, rotated at AuditMaxBytes; nil when off
	auditFails   *auditFailures
	watches      *watchHub     // the shared rounds of waiting watchers (watch_share.go)
	barrier      sharedBarrier // the watches' shared read barrier (watch_barrier.go)
	lists        *listViews    // the views paged host lists answer from (listviews.go)

	membersMu  sync.Mutex
	membersAt  time.Time
	membersIPs []net.IP
}

// New builds the server and its routes.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.State == nil {
		cfg.State = stateOf(cfg.Store)
	}
	if cfg.Registry == nil {
		cfg.Registry = prometheus.NewRegistry()
	}
	if cfg.WatchTimeout <= 0 {
		cfg.WatchTimeout = DefaultWatchTimeout
	}
	if cfg.ElectionTime <= 0 {
		cfg.ElectionTime = coordinator.Config{}.ElectionTime()
	}
	if cfg.WatchWriteTimeout <= 0 {
		cfg.WatchWriteTimeout = watchWriteTimeout
	}
	if cfg.AuthFailLimit == 0 {
		cfg.AuthFailLimit = DefaultAuthFailLimit
	}
	if cfg.AuthFailWindow <= 0 {
		cfg.AuthFailWindow = DefaultAuthFailWindow
	}
	if cfg.AuditFile == "" {
		cfg.AuditFile = filepath.Join(cfg.Store.DataDir(), "audit.log")
	}
	if cfg.AuditMaxBytes <= 0 {
		cfg.AuditMaxBytes = DefaultAuditMaxBytes
	}
	s := &Server{cfg: cfg, store: cfg.Store, state: cfg.State, log: cfg.Logger, limiter: newAuthLimiter(cfg.AuthFailLimit, cfg.AuthFailWindow),
		auditFails: newAuditFailures(cfg.Logger)}
	if a, err := jsonl.Open(cfg.AuditFile, jsonl.Options{MaxBytes: cfg.AuditMaxBytes}); err != nil {
		s.log.Error("the audit trail is off: its file cannot be opened", "path", cfg.AuditFile, "err", err)
	} else {
		s.auditLog = a
	}
	s.transport = &http.Transport{
		DialContext:         newMemberDialer(cfg.Store.HTTPURL(), cfg.ElectionTime).DialContext,
		TLSHandshakeTimeout: cfg.ElectionTime,
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 512,
		IdleConnTimeout:     90 * time.Second,
		TLSClientConfig:     cfg.ProxyTLS,
	}
	// The store is asked a sixteenth of an election's time apart (250 ms
	// with raft's defaults) while forwards wait.
	s.leaders = newLeaderWatch(func() string { _, u := s.store.Leader(); return u }, cfg.ElectionTime/16)
	s.forwardFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rackfence_forward_failures_total",
		Help: "Requests this member forwarded to the leader without relaying its answer, by reason (connect_timeout: no connection within an election's time; leader_moved: this member stopped following that leader; error: the connection failed) and answer (no_leader: 503, the leader surely did not get it; outcome_unknown: 504, a write that may have been applied).",
	}, []string{"reason", "answer"})
	s.reqs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rackfence_http_requests_total",
		Help: "HTTP requests answered by this member, by route, method and status code.",
	}, []string{"route", "method", "code"})
	s.authFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rackfence_auth_failures_total",
		Help: "Failed authentications decided by this member, by reason: missing, unknown (or revoked) or expired token.",
	}, []string{"reason"})
	s.rateLimited = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "rackfence_auth_rate_limited_total",
		Help: "Requests answered 429 because their address had too many failed authentications.",
	})
	for _, r := range []string{"missing", "unknown", "expired"} {
		s.authFailures.WithLabelValues(r) // present at 0 before the first failure
	}
	cfg.Registry.MustRegister(s.reqs, s.authFailures, s.rateLimited, s.forwardFailures, s.auditFails.total)
	s.watches = newWatchHub(cfg.Registry)
	s.watches.log = cfg.Logger
	s.lists = newListViews(cfg.Registry)

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.errorHandler
	e.Use(s.countRequests)
	e.Use(s.recoverPanics)
	e.Use(s.markWrites)
	s.echo = e
	s.routes()
	return s
}

// Handler is the server's http.Handler.
func (s *Server) Handler() http.Handler { return s.echo }

// Close closes the audit trail's file.
func (s *Server) Close() error {
	if s.auditLog == nil {
		return nil
	}
	return s.auditLog.Close()
}

func (s *Server) routes() {
	e := s.echo
	e.GET("/v1/health", s.health)
	e.GET("/v1/openapi.json", s.openAPI)
	e.GET("/metrics", echo.WrapHandler(promhttp.HandlerFor(s.cfg.Registry, promhttp.HandlerOpts{})))
	// The dashboard's static files, without auth: every API call the page
	// makes carries the bearer token the user enters.
	e.GET("/ui", func(c echo.Context) error { return c.Redirect(http.StatusMovedPermanently, "/ui/") })
	e.GET("/ui/*", echo.WrapHandler(http.StripPrefix("/ui/", ui.Handler())))

	// Answered locally by every member.
	local := e.Group("/v1", s.limitAuth, s.audit, s.localAuth)
	local.GET("/status", s.status)
	local.GET("/cluster/members", s.members)
	local.GET("/audit", s.getAudit)
	local.POST("/cluster/snapshot", s.snapshot)
	local.GET("/whoami", s.whoami)

	// Forwarded to the leader unless ?stale=true on a GET.
	v1 := e.Group("/v1", s.limitAuth, s.audit, s.forward, s.authMiddleware)
	v1.GET("/hosts", s.listHosts)
	v1.GET("/hosts/:name", s.getHost)
	v1.PUT("/hosts/:name", s.putHost)
	v1.DELETE("/hosts/:name", s.deleteHost)
	v1.POST("/hosts/:name/intents/:kind", s.postIntent)
	v1.DELETE("/hosts/:name/intents/:kind", s.deleteIntent)
	v1.DELETE("/hosts/:name/intents/:kind/:requester", s.deletePowerOff)
	v1.GET("/hosts/:name/events", s.events)
	v1.PUT("/hosts/:name/status", s.putStatus)
	v1.POST("/hosts/:name/task", s.postTask)
	v1.DELETE("/hosts/:name/task", s.deleteTask)
	v1.POST("/hosts/:name/pivot", s.pivotHost)
	v1.GET("/hosts/:name/bmc-account", s.getBMCAccount)
	v1.PUT("/hosts/:name/bmc-account", s.putBMCAccount)
	v1.POST("/hosts/:name/bmc-account/rotation", s.postBMCAccountRotation)
	v1.GET("/credentials", s.listCredentials)
	v1.GET("/credentials/:name", s.getCredentials)
	v1.PUT("/credentials/:name", s.putCredentials)
	v1.POST("/tokens", s.createToken)
	v1.POST("/certificates", s.issueCertificate)
	v1.GET("/tokens", s.listTokens)
	v1.DELETE("/tokens/:id", s.revokeToken)
	v1.GET("/secrets", s.secretsStatus)
	v1.POST("/secrets/reencrypt", s.reencrypt)
	v1.GET("/racks", s.listRacks)
	v1.GET("/racks/:rack/lease", s.getLease)
	v1.POST("/racks/:rack/lease", s.acquireLease)
	v1.PUT("/racks/:rack/lease", s.renewLease)
	v1.DELETE("/racks/:rack/lease", s.releaseLease)
	v1.GET("/racks/:rack/leases", s.leaseHistory)
	v1.POST("/racks/:rack/status", s.rackStatus)
	v1.GET("/watch", s.watch)
	v1.POST("/cluster/join", s.join)
	v1.GET("/cluster/snapshot", s.backup)
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
