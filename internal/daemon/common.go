package daemon

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/spf13/pflag"
)

// Log formats of --log-format.
const (
	FormatJSON = "json"
	FormatText = "text"
)

// Defaults of Common.
const (
	// DefaultLogLevel is --log-level's default.
	DefaultLogLevel = "info"
	// DefaultLogFormat is --log-format's default: one JSON object a line,
	// as log shippers read it (the coordinator always logged JSON; the
	// agent and bmcsim logged text before 2026-11-23, --log-format text
	// keeps that).
	DefaultLogFormat = FormatJSON
)

// Common is the configuration every daemon shares (--log-level,
// --log-format, --pprof-addr).
type Common struct {
	// LogLevel is debug, info, warn or error (slog's names, any case).
	LogLevel string
	// LogFormat is json (slog.JSONHandler) or text (slog.TextHandler).
	// Both go to stderr.
	LogFormat string
	// PprofAddr, when set, serves net/http/pprof on this address. It has
	// no authentication and exposes heap contents and command lines:
	// bind it to loopback, never expose it.
	PprofAddr string
}

// AddFlags declares Common's flags on fs with their defaults.
func (c *Common) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.LogLevel, "log-level", DefaultLogLevel, "log level: debug, info, warn or error")
	fs.StringVar(&c.LogFormat, "log-format", DefaultLogFormat, "log format on stderr: json (one object a line) or text")
	fs.StringVar(&c.PprofAddr, "pprof-addr", "", "serve net/http/pprof on this address, e.g. 127.0.0.1:6060 (off when empty; no authentication: never expose it)")
}

// Validate checks the values; every error names the flag.
func (c Common) Validate() error {
	if _, err := c.level(); err != nil {
		return fmt.Errorf("--log-level %q is not a level: use debug, info, warn or error", c.LogLevel)
	}
	if c.LogFormat != FormatJSON && c.LogFormat != FormatText {
		return fmt.Errorf("--log-format %q is not a format: use json or text", c.LogFormat)
	}
	if c.PprofAddr != "" {
		if _, _, err := net.SplitHostPort(c.PprofAddr); err != nil {
			return fmt.Errorf("--pprof-addr %q is not HOST:PORT (%v): use e.g. 127.0.0.1:6060", c.PprofAddr, err)
		}
	}
	return nil
}

func (c Common) level() (slog.Level, error) {
	var l slog.Level
	err := l.UnmarshalText([]byte(c.LogLevel))
	return l, err
}

// Logger returns the logger the flags ask for, writing to w. Call it
// after Validate (an unknown level logs at info, an unknown format JSON).
func (c Common) Logger(w io.Writer) *slog.Logger {
	lvl, _ := c.level()
	opts := &slog.HandlerOptions{Level: lvl}
	if c.LogFormat == FormatText {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// startPprof listens on PprofAddr (when set) and serves PprofHandler;
// the returned func stops it.
func (c Common) startPprof(log *slog.Logger) (func(), error) {
	if c.PprofAddr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", c.PprofAddr)
	if err != nil {
		return nil, fmt.Errorf("--pprof-addr %s: %w", c.PprofAddr, err)
	}
	srv := &http.Server{Handler: PprofHandler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	log.Info("pprof listening", "addr", ln.Addr().String())
	return func() { _ = srv.Close() }, nil
}

// PprofHandler serves Go's profiles under /debug/pprof/ (the index,
// profile, trace, symbol, cmdline and every named profile).
func PprofHandler() *http.ServeMux {
	m := http.NewServeMux()
	MountPprof(m)
	return m
}

// MountPprof adds the /debug/pprof/ handlers to mux (the agent's
// --pprof serves them beside /metrics).
func MountPprof(mux *http.ServeMux) {
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
}
