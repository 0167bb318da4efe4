package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/rackfence/rackfence/internal/pki"
)

// setTLS gives hc's transport the cluster trust (a CA file or a pin) and
// the client certificate, when any is asked for, and HTTP2Config when the
// transport has no HTTP/2 configuration. The transport is cloned; the
// cluster trust replaces whatever verification its TLS config had (a
// clone of http.DefaultTransport can carry one another package set).
// A transport that speaks HTTP/2 over TLS is then wrapped in
// coordTransport (h2.go), so concurrent first requests share one dial.
func setTLS(hc *http.Client, caFile, pin string, cert func(*tls.CertificateRequestInfo) (*tls.Certificate, error)) error {
	var base *http.Transport
	switch t := hc.Transport.(type) {
	case nil:
		base = http.DefaultTransport.(*http.Transport).Clone()
	case *http.Transport:
		base = t.Clone()
	default:
		return nil // a custom RoundTripper does its own TLS
	}
	if base.HTTP2 == nil {
		base.HTTP2 = HTTP2Config()
	}
	hc.Transport = base
	if caFile != "" || pin != "" || cert != nil {
		if err := setTrust(base, caFile, pin, cert); err != nil {
			return err
		}
	}
	if wantsCoordTransport(base) {
		hc.Transport = newCoordTransport(base)
	}
	return nil
}

// setTrust puts the cluster trust and the client certificate in base.
func setTrust(base *http.Transport, caFile, pin string, cert func(*tls.CertificateRequestInfo) (*tls.Certificate, error)) error {
	var caPEM []byte
	if caFile != "" {
		b, err := os.ReadFile(filepath.Clean(caFile))
		if err != nil {
			return fmt.Errorf("CA file: %w", err)
		}
		caPEM = b
	}
	cfg, err := pki.ClientTLS(caPEM, pin)
	if err != nil {
		if caFile != "" {
			return fmt.Errorf("CA file %s: %w", caFile, err)
		}
		return err
	}
	cfg.GetClientCertificate = cert
	if old := base.TLSClientConfig; old != nil {
		cfg.NextProtos, cfg.ServerName = old.NextProtos, old.ServerName
	}
	base.TLSClientConfig = cfg
	base.ForceAttemptHTTP2 = true
	return nil
}

// explainTLS adds what to do to the TLS errors an operator meets first.
func explainTLS(err error, u *url.URL) error {
	var unknown x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	switch {
	case errors.Is(err, pki.ErrPinMismatch):
		return fmt.Errorf("%w (the token or --ca-fingerprint pins another cluster's CA than %s presents)", err, u.Host)
	case errors.As(err, &unknown): // also inside a *tls.CertificateVerificationError
		return fmt.Errorf("%w: trust the cluster's CA with --ca-file (a member's DATA-DIR/tls/ca.crt) or use a token that pins it (rackfencectl token create prints one)", err)
	case errors.As(err, &hostErr):
		return fmt.Errorf("%w: the member's certificate does not name %s; reach it by a name it was issued for, or add the name with the coordinator's --tls-san", err, u.Hostname())
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return fmt.Errorf("%w: %s serves plain HTTP (--insecure-plaintext); use http:// for it", err, u.Host)
	}
	return err
}
