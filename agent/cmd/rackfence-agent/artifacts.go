package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rackfence/rackfence/agent/artifact"
)

// DefaultImageCacheSize is --image-cache-size's default.
const DefaultImageCacheSize = "20GiB"

// validateArtifacts checks the --artifact-* and --image-cache-* flags.
func (c *Config) validateArtifacts() error {
	if c.artifactAddr == "" {
		for _, f := range []struct{ flag, v string }{{"artifact-url", c.artifactURL}, {"artifact-cert-file", c.artifactCert},
			{"artifact-key-file", c.artifactKey}, {"image-cache-dir", c.imageCacheDir}} {
			if f.v != "" {
				return fmt.Errorf("--%s needs --artifact-addr (the address the rack's artifact server listens on, e.g. 10.0.0.5:8090)", f.flag)
			}
		}
		return nil
	}
	if c.provisioner != provDirect {
		return errors.New("--artifact-addr serves config drives and cached images to the BMCs of --provisioner direct; with --provisioner ironic, Ironic builds and serves them: leave --artifact-addr out")
	}
	host, _, err := net.SplitHostPort(c.artifactAddr)
	if err != nil {
		return fmt.Errorf("--artifact-addr %q: %v: give HOST:PORT, e.g. 10.0.0.5:8090", c.artifactAddr, err)
	}
	if (c.artifactCert == "") != (c.artifactKey == "") {
		return errors.New("--artifact-cert-file and --artifact-key-file go together: give both for HTTPS, or neither for HTTP")
	}
	if c.artifactURL != "" {
		u, err := url.Parse(c.artifactURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--artifact-url %q is not an http:// or https:// URL: give the URL the BMCs reach --artifact-addr at, e.g. http://10.0.0.5:8090", c.artifactURL)
		}
		if want := c.artifactScheme(); u.Scheme != want {
			return fmt.Errorf("--artifact-url %q is %s:// but the artifact server serves %s (--artifact-cert-file): make them agree", c.artifactURL, u.Scheme, want)
		}
	} else if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		return fmt.Errorf("--artifact-addr %s listens on every address, so the URL the BMCs reach is not known: set --artifact-url, e.g. %s://10.0.0.5:8090", c.artifactAddr, c.artifactScheme())
	}
	if c.imageCacheDir != "" {
		n, err := parseSize(c.imageCacheSize)
		if err != nil {
			return fmt.Errorf("--image-cache-size %v", err)
		}
		c.imageCacheBytes = n
	}
	return nil
}

func (c *Config) artifactScheme() string {
	if c.artifactCert != "" {
		return "https"
	}
	return "http"
}

// startArtifacts listens on --artifact-addr and serves the artifact
// server; nil when --artifact-addr is empty. stop closes both.
func startArtifacts(o *Config, reg prometheus.Registerer, log *slog.Logger) (srv *artifact.Server, stop func(), err error) {
	if o.artifactAddr == "" {
		return nil, func() {}, nil
	}
	var tlsCfg *tls.Config
	if o.artifactCert != "" {
		cert, err := tls.LoadX509KeyPair(o.artifactCert, o.artifactKey)
		if err != nil {
			return nil, nil, fmt.Errorf("--artifact-cert-file/--artifact-key-file: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", o.artifactAddr)
	if err != nil {
		return nil, nil, fmt.Errorf("--artifact-addr %s: %w", o.artifactAddr, err)
	}
	base := o.artifactURL
	if base == "" {
		base = o.artifactScheme() + "://" + ln.Addr().String()
	}
	s, err := artifact.New(artifact.Config{BaseURL: base, CacheDir: o.imageCacheDir, CacheSize: o.imageCacheBytes,
		Registerer: reg, Logger: log.With("component", "artifact")})
	if err != nil {
		ln.Close()
		return nil, nil, err
	}
	if tlsCfg != nil {
		ln = tls.NewListener(ln, tlsCfg)
	}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	log.Info("serving config drives and cached images to the rack's BMCs", "addr", ln.Addr().String(), "url", base,
		"imageCacheDir", o.imageCacheDir, "imageCacheBytes", o.imageCacheBytes)
	return s, func() { hs.Close(); s.Close() }, nil
}
