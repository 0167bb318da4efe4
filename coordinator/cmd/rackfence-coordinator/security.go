package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rackfence/rackfence/coordinator"
	capi "github.com/rackfence/rackfence/coordinator/api"
	"github.com/rackfence/rackfence/internal/pki"
	"github.com/rackfence/rackfence/internal/version"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/seal"
	"github.com/rackfence/rackfence/shared/wire"
)

// memberTLS is this member's transport security: the cluster CA, its own
// certificate (renewed in place), and the TLS configs of the API, Raft and
// forwarding to the leader.
type memberTLS struct {
	dir    string
	ca     *pki.CA
	holder *pki.Holder
	hosts  []string
	// operator is the certificate of --tls-cert/--tls-key, served on the
	// API instead of the member certificate when given.
	operator *tls.Certificate
	clientCA *x509.CertPool // --tls-client-ca
	// secrets receives the credentials keyring a joining member is sent.
	secrets *seal.Holder
}

// setupTLS loads or creates this member's CA and certificate:
//   - DATA/tls already holds them: load (a restart);
//   - joining a cluster for the first time: ask the member at --join for a
//     member certificate with the admin token, trusting only the CA the
//     token (or --ca-fingerprint / --ca-file) pins;
//   - otherwise (bootstrap): make a CA, or take --ca-cert/--ca-key, and
//     issue our own certificate.
func setupTLS(ctx context.Context, o *Config, existing bool, secrets *seal.Holder, log *slog.Logger) (*memberTLS, error) {
	m := &memberTLS{dir: filepath.Join(o.dataDir, "tls"), hosts: certHosts(o), secrets: secrets}
	if err := m.loadOperatorCert(o); err != nil {
		return nil, err
	}
	caFile, caKeyFile := filepath.Join(m.dir, pki.CACertFile), filepath.Join(m.dir, pki.CAKeyFile)
	certFile, keyFile := filepath.Join(m.dir, pki.MemberCertFile), filepath.Join(m.dir, pki.MemberKeyFile)
	switch {
	case fileExists(caFile) && fileExists(certFile):
		ca, err := pki.LoadCA(caFile, optional(caKeyFile))
		if err != nil {
			return nil, err
		}
		m.ca = ca
		c, _ := os.ReadFile(certFile)
		k, err := os.ReadFile(keyFile)
		if err != nil {
			return nil, fmt.Errorf("member key: %w", err)
		}
		if m.holder, err = pki.NewHolder(c, k); err != nil {
			return nil, fmt.Errorf("%s: %w", certFile, err)
		}
		if time.Now().After(m.holder.Leaf().NotAfter) {
			log.Warn("this member's certificate has expired; issuing a new one with the CA key", "notAfter", m.holder.Leaf().NotAfter)
			if err := m.issueOwn(o.nodeID, o.certValidity); err != nil {
				return nil, err
			}
		}
	case fileExists(caFile) && fileExists(caKeyFile):
		// The CA is here but the member certificate is not (deleted to
		// force a new one): issue it again.
		ca, err := pki.LoadCA(caFile, caKeyFile)
		if err != nil {
			return nil, err
		}
		m.ca = ca
		log.Info("no member certificate in the data dir; issuing a new one", "dir", m.dir)
		if err := m.issueOwn(o.nodeID, o.certValidity); err != nil {
			return nil, err
		}
	case o.join != "" && !existing:
		if err := m.enroll(ctx, o, log); err != nil {
			return nil, err
		}
	default:
		if existing {
			if o.caCert == "" {
				return nil, fmt.Errorf("data dir %s holds Raft state from before TLS (no %s): restart every member with --insecure-plaintext as before, "+
					"or give every member the same CA with --ca-cert and --ca-key (each then issues its own member certificate)", o.dataDir, m.dir)
			}
		}
		var err error
		if o.caCert != "" { // with --ca-key (Config.Validate)
			if m.ca, err = pki.LoadCA(o.caCert, o.caKey); err != nil {
				return nil, fmt.Errorf("--ca-cert/--ca-key: %w", err)
			}
			log.Info("using the operator's CA", "fingerprint", m.ca.Fingerprint(), "subject", m.ca.Cert.Subject.CommonName)
		} else {
			if m.ca, err = pki.NewCA("rackfence CA ("+o.tier+")", 0); err != nil {
				return nil, err
			}
			log.Info("created the cluster CA", "fingerprint", m.ca.Fingerprint(), "dir", m.dir)
		}
		if err := pki.WriteFile(caFile, m.ca.CertPEM); err != nil {
			return nil, err
		}
		if err := pki.WriteFile(caKeyFile, m.ca.KeyPEM); err != nil {
			return nil, err
		}
		if err := m.issueOwn(o.nodeID, o.certValidity); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// enroll obtains a member certificate and the CA from the member at --join.
func (m *memberTLS) enroll(ctx context.Context, o *Config, log *slog.Logger) error {
	token, err := joinToken(o)
	if err != nil {
		return err
	}
	_, pin := wire.ParseToken(token)
	if pin == "" && o.caFingerprint == "" && o.caFile == "" {
		return errors.New("--join over TLS needs to know the cluster's CA: use the admin token as the bootstrap member wrote it " +
			"(DATA/admin.token carries the CA fingerprint), or --ca-fingerprint SHA256 (rackfencectl cluster status shows it), or --ca-file")
	}
	cfg := client.Config{Coordinator: o.join, Token: token, CAFile: o.caFile, CAFingerprint: o.caFingerprint,
		UserAgent: version.UserAgent("rackfence-coordinator") + " (join; " + o.nodeID + ")", RetryFor: 60 * time.Second}
	if op := m.operator; op != nil {
		// Members that require client certificates (--tls-client-ca)
		// see the operator's certificate until this one has its own.
		cfg.ClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return op, nil }
	}
	cl, err := client.New(cfg)
	if err != nil {
		return fmt.Errorf("--join: %w", err)
	}
	key, csr, err := pki.NewKey()
	if err != nil {
		return err
	}
	var resp *wire.CertificateResponse
	for attempt := 1; ; attempt++ {
		resp, err = cl.IssueCertificate(ctx, wire.CertificateRequest{Kind: wire.CertKindMember, ID: o.nodeID, CSR: string(csr), Hosts: m.hosts})
		if err == nil {
			break
		}
		var ce *client.Error
		if errors.As(err, &ce) && ce.Status < 500 {
			return fmt.Errorf("--join %s refused the member certificate: %w", o.join, err)
		}
		if errors.Is(err, pki.ErrPinMismatch) {
			return fmt.Errorf("--join %s: %w", o.join, err)
		}
		log.Warn("member certificate request failed; retrying", "via", o.join, "attempt", attempt, "err", err.Error())
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	ca, err := pki.ParseCA([]byte(resp.CA), []byte(resp.CAKey))
	if err != nil {
		return fmt.Errorf("CA received from %s: %w", o.join, err)
	}
	// --ca-fingerprint, when given, names the cluster CA instead of the
	// token's pin: a cluster restored from a backup keeps the old tokens
	// (pinning the old CA) under a new CA. (--ca-file only says whom to
	// trust for the API connection: an operator's certificate may serve it.)
	if o.caFingerprint != "" {
		pin = o.caFingerprint
	}
	if pin != "" && !strings.EqualFold(ca.Fingerprint(), pin) {
		return fmt.Errorf("%w: %s sent CA %s", pki.ErrPinMismatch, o.join, ca.Fingerprint())
	}
	keyPEM, err := pki.KeyPEM(key)
	if err != nil {
		return err
	}
	if m.holder, err = pki.NewHolder([]byte(resp.Certificate), keyPEM); err != nil {
		return err
	}
	m.ca = ca
	for name, b := range map[string][]byte{pki.CACertFile: ca.CertPEM, pki.CAKeyFile: ca.KeyPEM,
		pki.MemberCertFile: []byte(resp.Certificate), pki.MemberKeyFile: keyPEM} {
		if err := pki.WriteFile(filepath.Join(m.dir, name), b); err != nil {
			return err
		}
	}
	if resp.SecretsKeys != "" {
		if err := adoptKeyring(m.secrets, []byte(resp.SecretsKeys), log); err != nil {
			return err
		}
	}
	log.Info("obtained a member certificate", "via", o.join, "caFingerprint", ca.Fingerprint(), "notAfter", resp.NotAfter)
	return nil
}

// issueOwn signs this member's certificate with the CA key and stores it.
func (m *memberTLS) issueOwn(nodeID string, validity time.Duration) error {
	certPEM, keyPEM, err := m.sign(nodeID, validity)
	if err != nil {
		return err
	}
	if m.holder == nil {
		if m.holder, err = pki.NewHolder(certPEM, keyPEM); err != nil {
			return err
		}
	} else if err := m.holder.Set(certPEM, keyPEM); err != nil {
		return err
	}
	return m.store(certPEM, keyPEM)
}

func (m *memberTLS) sign(nodeID string, validity time.Duration) ([]byte, []byte, error) {
	key, _, err := pki.NewKey()
	if err != nil {
		return nil, nil, err
	}
	r := pki.Request{Identity: pki.Identity{Kind: pki.KindMember, Name: nodeID}, PublicKey: key.Public(), Validity: validity}
	for _, h := range m.hosts {
		if ip := net.ParseIP(h); ip != nil {
			r.IPs = append(r.IPs, ip)
		} else {
			r.DNSNames = append(r.DNSNames, h)
		}
	}
	certPEM, _, err := m.ca.Issue(r)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := pki.KeyPEM(key)
	return certPEM, keyPEM, err
}

func (m *memberTLS) store(certPEM, keyPEM []byte) error {
	if err := pki.WriteFile(filepath.Join(m.dir, pki.MemberKeyFile), keyPEM); err != nil {
		return err
	}
	return pki.WriteFile(filepath.Join(m.dir, pki.MemberCertFile), certPEM)
}

// renew keeps the member certificate fresh: every member holds the CA key,
// so it signs its own renewal, whoever leads.
func (m *memberTLS) renew(ctx context.Context, nodeID string, validity time.Duration, log *slog.Logger) {
	m.holder.RenewLoop(ctx, func(context.Context) ([]byte, []byte, error) { return m.sign(nodeID, validity) },
		func(c, k []byte) {
			if err := m.store(c, k); err != nil {
				log.Warn("renewed member certificate not stored; the next start issues another", "err", err.Error())
			}
		}, log.With("cert", "member"))
}

// apiServer is the API's TLS config: the member (or operator) certificate;
// client certificates of this cluster verified when given (agents must give
// theirs), required when --tls-client-ca is set.
func (m *memberTLS) apiServer() *tls.Config {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ClientCAs: m.ca.Pool(), ClientAuth: tls.VerifyClientCertIfGiven,
		GetCertificate: m.holder.GetCertificate}
	if m.operator != nil {
		op := m.operator
		cfg.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return op, nil }
	}
	if m.clientCA != nil {
		cfg.ClientCAs = m.clientCA.Clone()
		cfg.ClientCAs.AddCert(m.ca.Cert)
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg
}

// raft is the mutual TLS of the Raft transport: members only, both ways.
func (m *memberTLS) raft() *coordinator.RaftTLS {
	pool := m.ca.Pool()
	return &coordinator.RaftTLS{
		Server: &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: m.holder.GetCertificate,
			ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool, VerifyConnection: pki.MemberVerifier(pool, true)},
		Client: m.memberClient(),
	}
}

// memberClient is how a member calls another member (Raft, forwarding):
// it presents its certificate and accepts only a member of this cluster,
// known by identity rather than by host name. With an operator certificate
// on the API (--tls-cert), forwarding verifies that one the usual way.
func (m *memberTLS) memberClient() *tls.Config {
	pool := m.ca.Pool()
	return &tls.Config{MinVersion: tls.VersionTLS12, GetClientCertificate: m.holder.GetClientCertificate,
		InsecureSkipVerify: true, VerifyConnection: pki.MemberVerifier(pool, false)}
}

func (m *memberTLS) proxyClient() *tls.Config {
	if m.operator == nil {
		return m.memberClient()
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, GetClientCertificate: m.holder.GetClientCertificate, RootCAs: m.clientCA}
}

func (m *memberTLS) apiConfig(validity time.Duration) *capi.TLSConfig {
	return &capi.TLSConfig{CA: m.ca, Holder: m.holder, CertValidity: validity}
}

// loadOperatorCert loads --tls-cert/--tls-key and --tls-client-ca
// (Config.Validate has checked that they go together).
func (m *memberTLS) loadOperatorCert(o *Config) error {
	if o.tlsCert == "" {
		return nil
	}
	cert, err := tls.LoadX509KeyPair(o.tlsCert, o.tlsKey)
	if err != nil {
		return fmt.Errorf("--tls-cert/--tls-key: %w", err)
	}
	m.operator = &cert
	if o.tlsClientCA != "" {
		b, err := os.ReadFile(filepath.Clean(o.tlsClientCA))
		if err != nil {
			return fmt.Errorf("--tls-client-ca: %w", err)
		}
		m.clientCA = x509.NewCertPool()
		if !m.clientCA.AppendCertsFromPEM(b) {
			return fmt.Errorf("--tls-client-ca %s holds no PEM certificate", o.tlsClientCA)
		}
	}
	return nil
}

// certHosts are the names a member certificate covers: the hosts of the
// API and Raft addresses (every local address when one is a wildcard),
// localhost, and --tls-san.
func certHosts(o *Config) []string {
	seen := map[string]bool{}
	var out []string
	add := func(h string) {
		if h != "" && !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	add("localhost")
	add("127.0.0.1")
	add("::1")
	hostOf := func(hp string) string {
		if u, err := url.Parse(hp); err == nil && u.Host != "" {
			hp = u.Host
		}
		h, _, err := net.SplitHostPort(hp)
		if err != nil {
			return strings.Trim(hp, "[]")
		}
		return h
	}
	for _, a := range []string{o.httpAddr, o.raftAddr, o.advertiseHTTP} {
		h := hostOf(a)
		if ip := net.ParseIP(h); h == "" || (ip != nil && ip.IsUnspecified()) {
			if hn, err := os.Hostname(); err == nil {
				add(hn)
			}
			if addrs, err := net.InterfaceAddrs(); err == nil {
				for _, a := range addrs {
					if n, ok := a.(*net.IPNet); ok {
						add(n.IP.String())
					}
				}
			}
			continue
		}
		add(h)
	}
	for _, s := range o.tlsSANs {
		add(s)
	}
	return out
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func optional(p string) string {
	if fileExists(p) {
		return p
	}
	return ""
}

// joinToken is the admin token --join presents: --join-token-file, else
// RACKFENCE_TOKEN.
func joinToken(o *Config) (string, error) {
	token := strings.TrimSpace(os.Getenv("RACKFENCE_TOKEN"))
	if o.joinTokenFile != "" {
		b, err := os.ReadFile(o.joinTokenFile)
		if err != nil {
			return "", fmt.Errorf("--join-token-file: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	if token == "" {
		return "", errors.New("--join needs the cluster's admin token: --join-token-file FILE or RACKFENCE_TOKEN")
	}
	return token, nil
}
