package pki

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func newCA(t *testing.T) *CA {
	t.Helper()
	ca, err := NewCA("test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func issue(t *testing.T, ca *CA, id Identity, validity time.Duration) (certPEM, keyPEM []byte) {
	t.Helper()
	key, csr, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	certPEM, _, err = ca.IssueCSR(csr, Request{Identity: id, IPs: []net.IP{net.ParseIP("127.0.0.1")}, Validity: validity})
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, _ = KeyPEM(key)
	return certPEM, keyPEM
}

func TestIdentityRoundTrip(t *testing.T) {
	ca := newCA(t)
	for _, id := range []Identity{{Kind: KindMember, Name: "n1"}, {Kind: KindAgent, Name: "host-1/x", Rack: "r 7"}} {
		_, cert, err := ca.Issue(Request{Identity: id, PublicKey: ca.Key.Public()})
		if err != nil {
			t.Fatal(err)
		}
		got, err := IdentityOf(cert)
		if err != nil || got != id {
			t.Fatalf("IdentityOf = %+v, %v; want %+v", got, err, id)
		}
	}
	if _, err := IdentityOf(ca.Cert); !errors.Is(err, ErrNoIdentity) {
		t.Fatalf("a CA certificate has no identity, got %v", err)
	}
	if _, _, err := ca.Issue(Request{Identity: Identity{Kind: KindAgent, Name: "a"}, PublicKey: ca.Key.Public()}); err == nil {
		t.Fatal("an agent certificate without a rack was issued")
	}
}

func TestParseCARejectsForeignKey(t *testing.T) {
	a, b := newCA(t), newCA(t)
	if _, err := ParseCA(a.CertPEM, b.KeyPEM); err == nil {
		t.Fatal("a CA with another CA's key was accepted")
	}
	if _, err := ParseCA(a.CertPEM, a.KeyPEM); err != nil {
		t.Fatal(err)
	}
}

// serve starts an HTTPS server with a member certificate of ca.
func serve(t *testing.T, ca *CA, clientAuth tls.ClientAuthType) *httptest.Server {
	certPEM, keyPEM := issue(t, ca, Identity{Kind: KindMember, Name: "n1"}, time.Hour)
	h, err := NewHolder(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	// httptest adds its own certificate when Certificates is empty, and
	// crypto/tls prefers it to GetCertificate for IP clients (no SNI).
	c, _ := h.GetCertificate(nil)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{*c}, ClientCAs: ca.Pool(), ClientAuth: clientAuth}
	if clientAuth == tls.RequireAndVerifyClientCert {
		srv.TLS.VerifyConnection = MemberVerifier(ca.Pool(), true)
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func get(cfg *tls.Config, url string) error {
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

func TestPinnedClient(t *testing.T) {
	ca := newCA(t)
	srv := serve(t, ca, tls.NoClientCert)
	ok, _ := ClientTLS(nil, ca.Fingerprint())
	if err := get(ok, srv.URL); err != nil {
		t.Fatalf("the right pin was refused: %v", err)
	}
	bad, _ := ClientTLS(nil, newCA(t).Fingerprint())
	if err := get(bad, srv.URL); err == nil || !strings.Contains(err.Error(), "pinned") {
		t.Fatalf("a wrong pin was accepted or gave an unclear error: %v", err)
	}
	byFile, _ := ClientTLS(ca.CertPEM, "")
	if err := get(byFile, srv.URL); err != nil {
		t.Fatalf("the CA file was refused: %v", err)
	}
	if err := get(&tls.Config{}, srv.URL); err == nil {
		t.Fatal("system roots trusted a private CA")
	}
	if _, err := ClientTLS(nil, "abc"); err == nil {
		t.Fatal("a short pin was accepted")
	}
}

func TestMemberVerifierRefusesAgentsAndStrangers(t *testing.T) {
	ca := newCA(t)
	srv := serve(t, ca, tls.RequireAndVerifyClientCert)
	client := func(certPEM, keyPEM []byte) *tls.Config {
		cfg, _ := ClientTLS(ca.CertPEM, "")
		if certPEM != nil {
			h, err := NewHolder(certPEM, keyPEM)
			if err != nil {
				t.Fatal(err)
			}
			cfg.GetClientCertificate = h.GetClientCertificate
		}
		return cfg
	}
	if err := get(client(issue(t, ca, Identity{Kind: KindMember, Name: "n2"}, time.Hour)), srv.URL); err != nil {
		t.Fatalf("a member was refused: %v", err)
	}
	if err := get(client(issue(t, ca, Identity{Kind: KindAgent, Name: "a", Rack: "r1"}, time.Hour)), srv.URL); err == nil {
		t.Fatal("an agent certificate passed the member check")
	}
	if err := get(client(issue(t, newCA(t), Identity{Kind: KindMember, Name: "n3"}, time.Hour)), srv.URL); err == nil {
		t.Fatal("a member of another cluster was admitted")
	}
	if err := get(client(nil, nil), srv.URL); err == nil {
		t.Fatal("a client without a certificate was admitted")
	}
}

func TestHolderRenews(t *testing.T) {
	if testing.Short() { // waits two thirds of a 3 s certificate
		t.Skip("-short: slow test")
	}
	ca := newCA(t)
	certPEM, keyPEM := issue(t, ca, Identity{Kind: KindAgent, Name: "a", Rack: "r1"}, 3*time.Second)
	h, err := NewHolder(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	first := h.Leaf().SerialNumber
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fails := 1
	go h.RenewLoop(ctx, func(context.Context) ([]byte, []byte, error) {
		if fails > 0 { // one failure first: the loop must retry
			fails--
			return nil, nil, errors.New("planted failure")
		}
		c, k := issue(t, ca, Identity{Kind: KindAgent, Name: "a", Rack: "r1"}, time.Hour)
		return c, k, nil
	}, nil, nil)
	deadline := time.Now().Add(60 * time.Second)
	for h.Renewals() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no renewal within 60 s of a 3 s certificate")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if h.Leaf().SerialNumber.Cmp(first) == 0 {
		t.Fatal("the renewed certificate is the old one")
	}
	// The renewal came two thirds into the 3 s (after one retry), and the
	// new certificate is not due at once: no renewal storm.
	if at := h.RenewAt(); time.Until(at) < 10*time.Minute {
		t.Fatalf("the renewed 1 h certificate is due for renewal at %v", at)
	}
}
