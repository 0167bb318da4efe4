// Package member opens one in-process coordinator member for tests: a
// Raft member (coordinator.Open) over real TCP on a loopback address, its
// metrics registry, and an HTTP listener that serves whatever handler the
// caller gives it. It is the layer below the in-process starter:
// coordtest.Start builds on it (serving coordinator/api), and so do the
// API's own tests (package api), which cannot import coordtest because
// coordtest imports them. Every other test uses coordtest.
package member

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/shared/seal"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// Config configures Open. ID is required; the rest has defaults.
type Config struct {
	// ID is the member's node ID.
	ID string
	// IP is the loopback address its Raft transport and API listen on
	// (default 127.0.0.1; 127.0.0.2 and .3 make a cluster look like
	// three hosts).
	IP string
	// Dir is the data directory (default a new t.TempDir()); a restart
	// passes the old member's Dir.
	Dir string
	// Bootstrap starts a new cluster of one; otherwise the member waits
	// to be added by a leader (POST /v1/cluster/join to it).
	Bootstrap bool
	// RaftPort and HTTPPort fix the ports (0 = free ones); a restart
	// passes the old member's.
	RaftPort, HTTPPort int
	// Secrets is the keyring that seals credentials; members of one
	// cluster share one. nil: a new key for this member.
	Secrets *seal.Holder
	// Logger receives the member's logs; nil discards them (or writes
	// them to stderr, tagged with the node ID, under go test -v).
	Logger *slog.Logger
	// Store, when not nil, changes the store's Config before Open.
	Store func(*coordinator.Config)
}

// Member is one open member. Open closes it at the test's cleanup.
type Member struct {
	ID, IP, Dir string
	// RaftAddr is IP:port of its Raft transport.
	RaftAddr string
	// URL is its API's base URL (http://IP:PORT), served once Serve is
	// called.
	URL string
	// Store is the member's state.
	Store *coordinator.Store
	// Registry holds the store's metrics; the API registers its own there.
	Registry *prometheus.Registry
	// Logger is the member's logger (to hand to the API).
	Logger *slog.Logger
	// Secrets is its credentials keyring.
	Secrets *seal.Holder

	ln        net.Listener
	hs        *http.Server
	stopAPI   func()
	closeOnce sync.Once
}

// Open listens for the API (so the URL the member stores for the others is
// known), opens the store and registers its metrics. Serve then serves the
// API.
func Open(t testing.TB, c Config) *Member {
	t.Helper()
	if c.ID == "" {
		t.Fatal("member: Config.ID is required")
	}
	if c.IP == "" {
		c.IP = "127.0.0.1"
	}
	if c.Dir == "" {
		c.Dir = t.TempDir()
	}
	if c.RaftPort == 0 {
		c.RaftPort = testenv.FreePort(t, c.IP)
	}
	m := &Member{ID: c.ID, IP: c.IP, Dir: c.Dir, RaftAddr: fmt.Sprintf("%s:%d", c.IP, c.RaftPort),
		Logger: c.Logger, Secrets: c.Secrets}
	raftLevel := "off"
	if testing.Verbose() {
		raftLevel = "warn"
	}
	if m.Logger == nil {
		m.Logger = slog.New(slog.DiscardHandler)
		if testing.Verbose() {
			m.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("node", c.ID)
		}
	}
	if m.Secrets == nil {
		key, err := seal.Generate()
		if err != nil {
			t.Fatalf("member %s: %v", c.ID, err)
		}
		m.Secrets = &seal.Holder{Path: "(test keyring of " + c.ID + ")"}
		m.Secrets.Set(key)
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("%s:%d", c.IP, c.HTTPPort))
	if err != nil {
		t.Fatalf("member %s: listen for the API: %v", c.ID, err)
	}
	m.ln = ln
	m.URL = "http://" + ln.Addr().String()
	metrics := coordinator.NewMetrics()
	sc := coordinator.Config{NodeID: c.ID, DataDir: c.Dir, HTTPURL: m.URL, RaftAddr: m.RaftAddr,
		Bootstrap: c.Bootstrap, Logger: m.Logger, RaftLogLevel: raftLevel, Metrics: metrics, Secrets: m.Secrets}
	if c.Store != nil {
		c.Store(&sc)
	}
	st, err := coordinator.Open(sc)
	if err != nil {
		ln.Close()
		t.Fatalf("member %s: open the store: %v", c.ID, err)
	}
	m.Store = st
	m.Registry = prometheus.NewRegistry()
	metrics.Register(m.Registry, st)
	t.Cleanup(m.Close)
	return m
}

// Serve serves h on the member's URL; stop, when not nil, runs at Close
// once the listener is closed and before the store is (the API's Close).
func (m *Member) Serve(h http.Handler, stop func()) {
	m.hs = &http.Server{Handler: h}
	m.stopAPI = stop
	go func() {
		if err := m.hs.Serve(m.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			m.Logger.Error("member: serve the API", "node", m.ID, "err", err)
		}
	}()
}

// HTTPPort is the port of URL (to restart the member on it).
func (m *Member) HTTPPort() int { return m.ln.Addr().(*net.TCPAddr).Port }

// WaitLeader waits up to 60 s until the member leads (a bootstrapped
// member elects itself in about a second).
func (m *Member) WaitLeader(t testing.TB) {
	t.Helper()
	testenv.Eventually(t, 60*time.Second, m.ID+" leading", func() error {
		if !m.Store.Ready() {
			return fmt.Errorf("raft state %s", m.Store.State())
		}
		return nil
	})
}

// AdminToken reads the bootstrap admin token the first leader wrote to its
// data dir.
func (m *Member) AdminToken(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(m.Dir, coordinator.AdminTokenFile))
	if err != nil {
		t.Fatalf("member %s: %v", m.ID, err)
	}
	return strings.TrimSpace(string(b))
}

// Close stops serving (in-flight requests, a watch's long poll included,
// are cut), runs Serve's stop, and closes the store. Open registers it as
// a cleanup; calling it again does nothing.
func (m *Member) Close() {
	m.closeOnce.Do(func() {
		if m.hs != nil {
			m.hs.Close()
		} else {
			m.ln.Close()
		}
		if m.stopAPI != nil {
			m.stopAPI()
		}
		m.Store.Close()
	})
}
