package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestArtifactFlagsValidated(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
		want string // "" = valid
	}{
		{"off", Config{provisioner: provDirect}, ""},
		{"url without addr", Config{provisioner: provDirect, artifactURL: "http://x:1"}, "--artifact-url needs --artifact-addr"},
		{"cache without addr", Config{provisioner: provDirect, imageCacheDir: "/c"}, "--image-cache-dir needs --artifact-addr"},
		{"ironic", Config{provisioner: provIronic, artifactAddr: "10.0.0.5:8090"}, "leave --artifact-addr out"},
		{"no port", Config{provisioner: provDirect, artifactAddr: "10.0.0.5"}, "--artifact-addr \"10.0.0.5\""},
		{"every address no url", Config{provisioner: provDirect, artifactAddr: ":8090"}, "set --artifact-url"},
		{"every address with url", Config{provisioner: provDirect, artifactAddr: "0.0.0.0:8090", artifactURL: "http://10.0.0.5:8090"}, ""},
		{"cert without key", Config{provisioner: provDirect, artifactAddr: "10.0.0.5:8090", artifactCert: "c.pem"}, "go together"},
		{"http url with tls", Config{provisioner: provDirect, artifactAddr: "10.0.0.5:8090", artifactCert: "c", artifactKey: "k",
			artifactURL: "http://10.0.0.5:8090"}, "serves https"},
		{"bad url", Config{provisioner: provDirect, artifactAddr: "10.0.0.5:8090", artifactURL: "10.0.0.5:8090"}, "not an http:// or https:// URL"},
		{"bad size", Config{provisioner: provDirect, artifactAddr: "10.0.0.5:8090", imageCacheDir: "/c", imageCacheSize: "lots"}, "--image-cache-size \"lots\""},
		{"good cache", Config{provisioner: provDirect, artifactAddr: "10.0.0.5:8090", imageCacheDir: "/c", imageCacheSize: "2GiB"}, ""},
	} {
		err := c.cfg.validateArtifacts()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: err = %v, want one with %q", c.name, err, c.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"20GiB": 20 << 30, "500MB": 500e6, "4096": 4096, "1 TiB": 1 << 40, "7B": 7} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1GiB", "1.5GiB", "GiB", "20 gigs", "99999999999TiB"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) accepted", in)
		}
	}
}

// writeSelfSigned writes a throwaway certificate for 127.0.0.1.
func writeSelfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "artifact"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return certFile, keyFile
}

func TestArtifactServerOverHTTPS(t *testing.T) {
	cert, key := writeSelfSigned(t)
	o := &Config{provisioner: provDirect, artifactAddr: "127.0.0.1:0", artifactCert: cert, artifactKey: key}
	if err := o.validateArtifacts(); err != nil {
		t.Fatal(err)
	}
	s, stop, err := startArtifacts(o, prometheus.NewRegistry(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if !strings.HasPrefix(s.BaseURL(), "https://127.0.0.1:") || strings.HasSuffix(s.BaseURL(), ":0") {
		t.Fatalf("derived URL %s: want https://127.0.0.1:PORT with the port listened on", s.BaseURL())
	}
	u, err := s.PublishDrive("h1", []byte("drive"))
	if err != nil {
		t.Fatal(err)
	}
	cl := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := cl.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(b) != "drive" || resp.TLS == nil {
		t.Fatalf("GET over HTTPS: %d %q tls=%v", resp.StatusCode, b, resp.TLS != nil)
	}
	// A missing key file fails the start with the flag's name.
	o2 := &Config{provisioner: provDirect, artifactAddr: "127.0.0.1:0", artifactCert: cert, artifactKey: key + ".gone"}
	if _, _, err := startArtifacts(o2, nil, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "--artifact-key-file") {
		t.Fatalf("missing key: %v", err)
	}
}
