package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	crand "crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/rackfence/rackfence/agent"
)

// eventFlags are the --events-* and --power-poll flags.
type eventFlags struct {
	// addr is the listener's address (empty: off); url how BMCs reach it;
	// cert/key its certificate (empty: self-signed at start).
	addr, url, cert, key string
	silence, powerPoll   time.Duration
}

func (e *eventFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&e.addr, "events-addr", "", "receive Redfish events pushed by the rack's BMCs on this address (HOST:PORT, HTTPS; --provisioner direct); the BMCs must reach it (management network, firewall: allow TCP from the BMCs to this port); empty: off, power is not polled unless --power-poll")
	fs.StringVar(&e.url, "events-url", "", "https:// URL of --events-addr as the BMCs reach it (e.g. https://10.0.0.5:8443); empty: from --events-addr (which must then name a host)")
	fs.StringVar(&e.cert, "events-cert-file", "", "certificate (PEM) of the event listener, with --events-key-file; empty: a self-signed one made at start (BMCs do not verify event destinations by default)")
	fs.StringVar(&e.key, "events-key-file", "", "private key (PEM) of --events-cert-file")
	fs.DurationVar(&e.silence, "events-silence", agent.DefaultEventsSilence, "a BMC subscription with no event for this long (a test event is asked for half-way) falls back to polling; a BMC that forgot the subscription is subscribed again")
	fs.DurationVar(&e.powerPoll, "power-poll", 0, "read each registered host's power from its BMC this often (4x less often while its events are live); 0: --status-refresh with --events-addr, no poll without")
}

// validate checks the event flags.
func (e *eventFlags) validate(provisionerName string) error {
	if e.silence < 0 || e.powerPoll < 0 {
		return errors.New("--events-silence and --power-poll must not be negative: use a positive duration (0 takes the default)")
	}
	if e.addr == "" {
		for _, f := range []struct{ flag, v string }{{"events-url", e.url}, {"events-cert-file", e.cert}, {"events-key-file", e.key}} {
			if f.v != "" {
				return fmt.Errorf("--%s needs --events-addr (the address the event listener listens on, e.g. 10.0.0.5:8443)", f.flag)
			}
		}
		return nil
	}
	if provisionerName != provDirect {
		return errors.New("--events-addr subscribes BMCs of --provisioner direct; with --provisioner ironic leave it out")
	}
	host, _, err := net.SplitHostPort(e.addr)
	if err != nil {
		return fmt.Errorf("--events-addr %q: %v: give HOST:PORT, e.g. 10.0.0.5:8443", e.addr, err)
	}
	if (e.cert == "") != (e.key == "") {
		return errors.New("--events-cert-file and --events-key-file go together: give both, or neither for a self-signed certificate")
	}
	if e.url != "" {
		u, err := url.Parse(e.url)
		if err != nil || u.Scheme != "https" || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return fmt.Errorf("--events-url %q is not an https:// URL without a path: give the URL the BMCs reach --events-addr at, e.g. https://10.0.0.5:8443", e.url)
		}
		return nil
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		return fmt.Errorf("--events-addr %s listens on every address, so the URL the BMCs reach is not known: set --events-url, e.g. https://10.0.0.5:8443", e.addr)
	}
	return nil
}

// listen opens the listener and returns the URL BMCs reach it at ("" and
// nil when off).
func (e *eventFlags) listen() (net.Listener, string, error) {
	if e.addr == "" {
		return nil, "", nil
	}
	ln, err := net.Listen("tcp", e.addr)
	if err != nil {
		return nil, "", fmt.Errorf("--events-addr %s: %w", e.addr, err)
	}
	u := e.url
	if u == "" {
		u = "https://" + ln.Addr().String()
	}
	if len(u) > 0 && u[len(u)-1] == '/' {
		u = u[:len(u)-1]
	}
	return ln, u, nil
}

// serve serves a's event handler over HTTPS on ln; stop closes it.
func (e *eventFlags) serve(ln net.Listener, a *agent.Agent, log *slog.Logger) (stop func(), err error) {
	if ln == nil {
		return func() {}, nil
	}
	var cert tls.Certificate
	if e.cert != "" {
		cert, err = tls.LoadX509KeyPair(e.cert, e.key)
		if err != nil {
			return nil, fmt.Errorf("--events-cert-file/--events-key-file: %w", err)
		}
	} else if cert, err = selfSigned(); err != nil {
		return nil, fmt.Errorf("event listener certificate: %w", err)
	}
	tln := tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	mux := http.NewServeMux()
	mux.Handle("/events/", a.EventsHandler())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, MaxHeaderBytes: 16 << 10}
	go func() { _ = hs.Serve(tln) }()
	log.Info("receiving BMC events", "addr", ln.Addr().String(), "selfSigned", e.cert == "")
	return func() { hs.Close() }, nil
}

// selfSigned makes an ECDSA P-256 certificate valid for a year.
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), crand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, _ := crand.Int(crand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: "rackfence-agent events"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(365 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(crand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
