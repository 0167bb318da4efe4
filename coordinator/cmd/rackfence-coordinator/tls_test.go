package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// writePKI writes a CA and one certificate (server and client use) for
// 127.0.0.1-3 into dir and returns their paths and the pool.
func writePKI(t *testing.T, dir string) (ca, cert, key string, pool *x509.CertPool, pair tls.Certificate) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "rackfence test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "member"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("127.0.0.2"), net.ParseIP("127.0.0.3")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(k)
	ca, cert, key = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600)
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	pool = x509.NewCertPool()
	pool.AddCert(caCert)
	pair, err = tls.LoadX509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	return
}

// TestTLSWithClientCertificates serves HTTPS with required client
// certificates: a client without one is refused at the handshake, and a
// second member joins and forwards writes to the leader over TLS.
func TestTLSWithClientCertificates(t *testing.T) {
	bin := testenv.Binary(t, "rackfence-coordinator")
	dir := t.TempDir()
	ca, cert, key, pool, pair := writePKI(t, dir)
	tlsArgs := []string{"--tls-cert", cert, "--tls-key", key, "--tls-client-ca", ca, "--raft-log-level", "error", "--probe-interval", "500ms"}
	h1, r1 := testenv.FreePort(t, "127.0.0.1"), testenv.FreePort(t, "127.0.0.1")
	h2, r2 := testenv.FreePort(t, "127.0.0.2"), testenv.FreePort(t, "127.0.0.2")
	u1, u2 := fmt.Sprintf("https://127.0.0.1:%d", h1), fmt.Sprintf("https://127.0.0.2:%d", h2)
	testenv.Start(t, "n1", bin, nil, append([]string{"--node-id", "n1", "--data-dir", filepath.Join(dir, "1"),
		"--http-addr", fmt.Sprintf("127.0.0.1:%d", h1), "--raft-addr", fmt.Sprintf("127.0.0.1:%d", r1)}, tlsArgs...)...)
	var token string
	testenv.Eventually(t, 60*time.Second, "admin token", func() error {
		b, err := os.ReadFile(filepath.Join(dir, "1", "admin.token"))
		token = strings.TrimSpace(string(b))
		if token == "" {
			return fmt.Errorf("none yet: %v", err)
		}
		return nil
	})
	good := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}}}}
	bad := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	testenv.Eventually(t, 60*time.Second, "n1 serving HTTPS", func() error {
		resp, err := good.Get(u1 + "/v1/health")
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	})
	if resp, err := bad.Get(u1 + "/v1/health"); err == nil {
		resp.Body.Close()
		t.Fatal("a client without a certificate was served")
	}
	testenv.Start(t, "n2", bin, []string{"RACKFENCE_TOKEN=" + token}, append([]string{"--node-id", "n2", "--data-dir", filepath.Join(dir, "2"),
		"--http-addr", fmt.Sprintf("127.0.0.2:%d", h2), "--raft-addr", fmt.Sprintf("127.0.0.2:%d", r2), "--join", u1,
		// The API serves the operator's certificate, not one of the
		// cluster CA the token pins: the joiner trusts the operator's CA.
		"--ca-file", ca}, tlsArgs...)...)
	put := func() error {
		b, _ := json.Marshal(wire.Host{Name: "h1", Rack: "r1"})
		req, _ := http.NewRequest("PUT", u2+"/v1/hosts/h1", bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := good.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 201 && resp.StatusCode != 200 {
			return fmt.Errorf("PUT through n2: %d", resp.StatusCode)
		}
		return nil
	}
	testenv.Eventually(t, 90*time.Second, "a write through the joined member", put)
	// The leader reads n2's health over mutual TLS and records its version.
	testenv.Eventually(t, 60*time.Second, "n2's version recorded by the leader", func() error {
		req, _ := http.NewRequest("GET", u1+"/v1/status", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := good.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var st wire.ClusterStatus
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			return err
		}
		for _, m := range st.Members {
			if m.ID == "n2" && m.Version != "" && m.Version != fsm.LegacyVersion {
				return nil
			}
		}
		return fmt.Errorf("members %+v", st.Members)
	})
}
