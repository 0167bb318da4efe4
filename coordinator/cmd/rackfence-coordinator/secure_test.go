package main

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/rackfence/rackfence/internal/pki"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// raftCall sends a RequestVote to addr over stream and reports the
// transport's error (nil: the member answered at the Raft level).
func raftCall(t *testing.T, stream raft.StreamLayer, addr string) error {
	t.Helper()
	tr := raft.NewNetworkTransportWithLogger(stream, 1, 5*time.Second, hclog.NewNullLogger())
	defer tr.Close()
	var resp raft.RequestVoteResponse
	return tr.RequestVote("n1", raft.ServerAddress(addr), &raft.RequestVoteRequest{
		RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("intruder"), Addr: []byte("127.0.0.9:1")}, Term: 1}, &resp)
}

// dialStream is a client-only raft.StreamLayer over TCP, or TLS when cfg
// is set.
type dialStream struct {
	net.Listener
	cfg *tls.Config
}

func (d dialStream) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	if d.cfg == nil {
		return net.DialTimeout("tcp", string(addr), timeout)
	}
	return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, "tcp", string(addr), d.cfg)
}

func newDialStream(t *testing.T, cfg *tls.Config) dialStream {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return dialStream{Listener: ln, cfg: cfg}
}

// TestSecureByDefault: with no TLS flag the coordinator serves HTTPS only,
// its token pins its CA, the Raft port admits only members of the cluster,
// and an agent token works only with the agent's own certificate.
func TestSecureByDefault(t *testing.T) {
	ms, token := startCluster(t, testenv.Binary(t, "rackfence-coordinator"), 1, clusterOpts{})
	m := struct{ dir, url, raftAddr, token string }{ms[0].dir, ms[0].url(), fmt.Sprintf("%s:%d", ms[0].ip, ms[0].raft), token}
	caPEM, err := os.ReadFile(filepath.Join(m.dir, "tls", pki.CACertFile))
	if err != nil {
		t.Fatal(err)
	}
	ca, err := pki.ParseCA(caPEM, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(ca.Cert.Raw)
	if _, pin := wire.ParseToken(m.token); pin != hex.EncodeToString(sum[:]) {
		t.Fatalf("admin.token pins %q, the CA is %x", pin, sum)
	}
	for _, f := range []string{pki.CAKeyFile, pki.MemberKeyFile} {
		if fi, err := os.Stat(filepath.Join(m.dir, "tls", f)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want mode 0600", f, fi.Mode(), err)
		}
	}
	ctx := context.Background()
	admin, err := client.New(client.Config{Coordinator: m.url, Token: m.token})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 60*time.Second, "a leader over TLS", func() error {
		st, err := admin.Status(ctx)
		if err != nil {
			return err
		}
		if !st.TLS.Enabled || st.TLS.CAFingerprint != ca.Fingerprint() || len(st.Warnings) != 0 || st.State != "leader" {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})

	t.Run("plaintext HTTP to the API is refused", func(t *testing.T) {
		secret, _ := wire.ParseToken(m.token)
		req, _ := http.NewRequest("GET", strings.Replace(m.url, "https://", "http://", 1)+"/v1/hosts", nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			return // refused at the connection: also fine
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "HTTPS") {
			t.Fatalf("plain HTTP answered %d %q", resp.StatusCode, b)
		}
	})

	t.Run("raft admits only cluster members", func(t *testing.T) {
		agentTok, err := admin.CreateToken(ctx, wire.TokenRequest{Role: wire.RoleAgent, Rack: "r1"})
		if err != nil {
			t.Fatal(err)
		}
		agentCl, agentCert, err := testenv.AgentClient(ctx, client.Config{Coordinator: m.url, Token: agentTok.Token}, "a1")
		if err != nil {
			t.Fatal(err)
		}
		_ = agentCl
		full, err := pki.LoadCA(filepath.Join(m.dir, "tls", pki.CACertFile), filepath.Join(m.dir, "tls", pki.CAKeyFile))
		if err != nil {
			t.Fatal(err)
		}
		other, _ := pki.NewCA("another cluster", time.Hour)
		member := func(ca *pki.CA) *tls.Config {
			key, csr, _ := pki.NewKey()
			certPEM, _, err := ca.IssueCSR(csr, pki.Request{Identity: pki.Identity{Kind: pki.KindMember, Name: "s9"}, Validity: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			keyPEM, _ := pki.KeyPEM(key)
			h, _ := pki.NewHolder(certPEM, keyPEM)
			return &tls.Config{GetClientCertificate: h.GetClientCertificate, InsecureSkipVerify: true,
				VerifyConnection: pki.MemberVerifier(full.Pool(), false)}
		}
		cases := []struct {
			name   string
			cfg    *tls.Config
			member bool
		}{
			{"plain TCP", nil, false},
			{"TLS without a certificate", &tls.Config{InsecureSkipVerify: true}, false},
			{"TLS with this cluster's agent certificate", &tls.Config{InsecureSkipVerify: true, GetClientCertificate: agentCert.GetClientCertificate}, false},
			{"TLS with another cluster's member certificate", member(other), false},
			// The control: a member certificate of this cluster's CA gets
			// a Raft answer, so the refusals above are the TLS layer's.
			{"TLS with this cluster's member certificate", member(full), true},
		}
		for _, tc := range cases {
			err := raftCall(t, newDialStream(t, tc.cfg), m.raftAddr)
			if tc.member && err != nil {
				t.Errorf("%s: refused: %v", tc.name, err)
			}
			if !tc.member && err == nil {
				t.Errorf("%s: the Raft port answered a RequestVote", tc.name)
			}
			t.Logf("%s: %v", tc.name, err)
		}
	})

	t.Run("agent tokens need the agent's certificate for its rack", func(t *testing.T) {
		tok1, err := admin.CreateToken(ctx, wire.TokenRequest{Role: wire.RoleAgent, Rack: "r1"})
		if err != nil {
			t.Fatal(err)
		}
		tok2, err := admin.CreateToken(ctx, wire.TokenRequest{Role: wire.RoleAgent, Rack: "r2"})
		if err != nil {
			t.Fatal(err)
		}
		bare, _ := client.New(client.Config{Coordinator: m.url, Token: tok1.Token})
		if _, err := bare.GetLease(ctx, "r1"); !client.IsForbidden(err) || !strings.Contains(err.Error(), "client certificate") {
			t.Errorf("agent token without a certificate: %v", err)
		}
		_, cert2, err := testenv.AgentClient(ctx, client.Config{Coordinator: m.url, Token: tok2.Token}, "a2")
		if err != nil {
			t.Fatal(err)
		}
		if id, _ := pki.IdentityOf(cert2.Leaf()); id.Rack != "r2" || id.Kind != pki.KindAgent {
			t.Fatalf("the r2 token's certificate names %+v", id)
		}
		crossed, _ := client.New(client.Config{Coordinator: m.url, Token: tok1.Token, ClientCertificate: cert2.GetClientCertificate})
		if _, err := crossed.GetLease(ctx, "r1"); !client.IsForbidden(err) || !strings.Contains(err.Error(), "names rack r2") {
			t.Errorf("r1 token with r2's certificate: %v", err)
		}
		own, _, err := testenv.AgentClient(ctx, client.Config{Coordinator: m.url, Token: tok1.Token}, "a1")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := own.GetLease(ctx, "r1"); err != nil && !client.IsNotFound(err) {
			t.Errorf("r1 token with its own certificate: %v", err)
		}
		// An admin token cannot get an agent certificate (it names no rack).
		if _, _, err := admin.IssueAgentCert(ctx, "x"); !client.IsForbidden(err) {
			t.Errorf("agent certificate for an admin token: %v", err)
		}
	})
}

// TestInsecurePlaintextIsLoud: the opt-out works, and says so in the log
// and in /v1/status.
func TestInsecurePlaintextIsLoud(t *testing.T) {
	dir := t.TempDir()
	hp, rp := testenv.FreePort(t, "127.0.0.1"), testenv.FreePort(t, "127.0.0.1")
	p := testenv.Start(t, "plain", testenv.Binary(t, "rackfence-coordinator"), nil, "--node-id", "p1", "--data-dir", dir,
		"--http-addr", fmt.Sprintf("127.0.0.1:%d", hp), "--raft-addr", fmt.Sprintf("127.0.0.1:%d", rp), "--insecure-plaintext")
	var tok string
	testenv.Eventually(t, 60*time.Second, "admin.token", func() error {
		var err error
		tok, err = client.ReadTokenFile(filepath.Join(dir, "admin.token"))
		return err
	})
	if _, pin := wire.ParseToken(tok); pin != "" {
		t.Errorf("a plaintext cluster's token pins a CA: %s", pin)
	}
	cl, _ := client.New(client.Config{Coordinator: fmt.Sprintf("http://127.0.0.1:%d", hp), Token: tok})
	testenv.Eventually(t, 60*time.Second, "status with the warning", func() error {
		st, err := cl.Status(context.Background())
		if err != nil {
			return err
		}
		if st.TLS.Enabled || len(st.Warnings) == 0 || !strings.Contains(st.Warnings[0], "insecure-plaintext") {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
	if !strings.Contains(p.Output(), "INSECURE") {
		t.Errorf("no INSECURE warning in the log:\n%s", p.Output())
	}
	if _, err := os.Stat(filepath.Join(dir, "tls")); err == nil {
		t.Error("a plaintext member made a CA")
	}
}

// TestCertificatesRenewWithoutRestart: with 8 s certificates, the member
// and a real agent renew theirs again and again while the agent keeps its
// lease under one epoch — no restart, no fencing.
func TestCertificatesRenewWithoutRestart(t *testing.T) {
	c := rig.StartCoordinator(t, t.TempDir(), rig.CoordOpts{Args: []string{"--cert-validity", "8s"}})
	ctx := context.Background()
	st0, err := c.Admin.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	agent := c.StartAgent("r1", "renewing-agent")
	var epoch uint64
	testenv.Eventually(t, 60*time.Second, "the agent holding r1", func() error {
		l, err := c.Admin.GetLease(ctx, "r1")
		if err != nil {
			return err
		}
		if l.Holder != "renewing-agent" {
			return fmt.Errorf("holder %q", l.Holder)
		}
		epoch = l.Epoch
		return nil
	})
	testenv.Eventually(t, 120*time.Second, "three agent renewals and three member renewals", func() error {
		if agent.Exited() {
			t.Fatalf("agent exited:\n%s", agent.Output())
		}
		a, m := strings.Count(agent.Output(), "certificate renewed"), strings.Count(c.Proc.Output(), "certificate renewed")
		if a < 3 || m < 3 {
			return fmt.Errorf("agent renewed %d, member %d times", a, m)
		}
		return nil
	})
	l, err := c.Admin.GetLease(ctx, "r1")
	if err != nil || l.Holder != "renewing-agent" || l.Epoch != epoch {
		t.Fatalf("after renewals the lease is %+v (%v), want holder renewing-agent epoch %d", l, err, epoch)
	}
	st1, err := c.Admin.Status(ctx)
	if err != nil || !st1.TLS.CertNotAfter.After(st0.TLS.CertNotAfter) {
		t.Fatalf("member certificate not renewed in place: %v → %+v (%v)", st0.TLS.CertNotAfter, st1.TLS, err)
	}
	if strings.Contains(agent.Output(), "rack lease lost") {
		t.Errorf("the agent lost its lease while renewing certificates:\n%s", agent.Output())
	}
}
