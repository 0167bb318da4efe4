package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Validity defaults.
const (
	// DefaultCAValidity is how long a generated CA lasts (10 years; an
	// operator-supplied CA keeps its own).
	DefaultCAValidity = 10 * 365 * 24 * time.Hour
	// DefaultCertValidity is how long member and agent certificates last.
	// Holders renew at two thirds of it, so a member or agent that is down
	// for less than a third of it comes back with a valid certificate.
	DefaultCertValidity = 30 * 24 * time.Hour
	// backdate absorbs clock skew between the signer and the verifier.
	backdate = 5 * time.Minute
)

// CA is a tier's certificate authority.
type CA struct {
	Cert    *x509.Certificate
	CertPEM []byte
	Key     crypto.Signer
	KeyPEM  []byte
}

// NewCA makes a new self-signed CA (ECDSA P-256).
func NewCA(name string, validity time.Duration) (*CA, error) {
	if validity <= 0 {
		validity = DefaultCAValidity
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"rackfence"}},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(validity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, _ := x509.ParseCertificate(der)
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, CertPEM: encodeCert(der), Key: key,
		KeyPEM: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb})}, nil
}

// ParseCA reads a CA from PEM: the certificate (the first CERTIFICATE
// block) and, when keyPEM is not empty, its private key.
func ParseCA(certPEM, keyPEM []byte) (*CA, error) {
	cert, err := ParseCert(certPEM)
	if err != nil {
		return nil, err
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("certificate %q is not a CA (basic constraints CA:FALSE)", cert.Subject.CommonName)
	}
	ca := &CA{Cert: cert, CertPEM: encodeCert(cert.Raw)}
	if len(keyPEM) == 0 {
		return ca, nil
	}
	key, err := ParseKey(keyPEM)
	if err != nil {
		return nil, err
	}
	if !publicKeysEqual(key.Public(), cert.PublicKey) {
		return nil, errors.New("the CA key does not belong to the CA certificate")
	}
	ca.Key, ca.KeyPEM = key, keyPEM
	return ca, nil
}

// LoadCA reads a CA from files (key optional: "" reads none).
func LoadCA(certFile, keyFile string) (*CA, error) {
	c, err := os.ReadFile(filepath.Clean(certFile))
	if err != nil {
		return nil, err
	}
	var k []byte
	if keyFile != "" {
		if k, err = os.ReadFile(filepath.Clean(keyFile)); err != nil {
			return nil, err
		}
	}
	ca, err := ParseCA(c, k)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", certFile, err)
	}
	return ca, nil
}

// Fingerprint is the hex SHA-256 of the CA certificate's DER bytes: the
// pin tokens and --ca-fingerprint carry.
func (ca *CA) Fingerprint() string { return Fingerprint(ca.Cert) }

// Fingerprint is the hex SHA-256 of a certificate's DER bytes.
func Fingerprint(c *x509.Certificate) string {
	h := sha256.Sum256(c.Raw)
	return hex.EncodeToString(h[:])
}

// Pool is a cert pool holding only this CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Request is what a certificate is issued for.
type Request struct {
	Identity Identity
	// PublicKey is the subject's key (from a CSR, or a key made here).
	PublicKey crypto.PublicKey
	// DNSNames and IPs are the SANs a member's server certificate needs
	// (agents: none).
	DNSNames []string
	IPs      []net.IP
	Validity time.Duration // <= 0: DefaultCertValidity
}

// Issue signs a certificate for r and returns it as PEM, leaf first then
// the CA, so a client that pins the CA finds it in the chain.
func (ca *CA) Issue(r Request) ([]byte, *x509.Certificate, error) {
	if ca.Key == nil {
		return nil, nil, errors.New("this member holds no CA key, so it cannot issue certificates")
	}
	if r.Validity <= 0 {
		r.Validity = DefaultCertValidity
	}
	now := time.Now()
	// Backdate for clock skew, but by at most a tenth of the lifetime:
	// holders renew two thirds into [NotBefore, NotAfter], which must stay
	// ahead of now for a short-lived certificate.
	bd := min(backdate, r.Validity/10)
	notAfter := now.Add(r.Validity)
	if notAfter.After(ca.Cert.NotAfter) {
		notAfter = ca.Cert.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: r.Identity.Kind + ":" + r.Identity.Name, Organization: []string{"rackfence"}},
		NotBefore:    now.Add(-bd),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		URIs:         nil,
		DNSNames:     r.DNSNames,
		IPAddresses:  r.IPs,
	}
	tmpl.URIs = append(tmpl.URIs, r.Identity.URI())
	switch r.Identity.Kind {
	case KindMember:
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	case KindAgent:
		if r.Identity.Rack == "" {
			return nil, nil, errors.New("an agent certificate needs a rack")
		}
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
		tmpl.Subject.OrganizationalUnit = []string{"rack:" + r.Identity.Rack}
	default:
		return nil, nil, fmt.Errorf("unknown identity kind %q", r.Identity.Kind)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, r.PublicKey, ca.Key)
	if err != nil {
		return nil, nil, err
	}
	cert, _ := x509.ParseCertificate(der)
	return append(encodeCert(der), ca.CertPEM...), cert, nil
}

// IssueCSR checks a PEM CSR's signature and issues a certificate for its
// key; the identity and SANs come from the caller (the CSR's own names are
// ignored: the token decides who the subject is).
func (ca *CA) IssueCSR(csrPEM []byte, r Request) ([]byte, *x509.Certificate, error) {
	b, _ := pem.Decode(csrPEM)
	if b == nil || b.Type != "CERTIFICATE REQUEST" {
		return nil, nil, errors.New("not a PEM CERTIFICATE REQUEST")
	}
	csr, err := x509.ParseCertificateRequest(b.Bytes)
	if err != nil {
		return nil, nil, err
	}
	if err := csr.CheckSignature(); err != nil {
		return nil, nil, fmt.Errorf("the CSR's signature does not verify: %w", err)
	}
	r.PublicKey = csr.PublicKey
	return ca.Issue(r)
}

// NewKey makes a key for a member or agent certificate and its CSR.
func NewKey() (crypto.Signer, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "rackfence"}}, key)
	if err != nil {
		return nil, nil, err
	}
	return key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), nil
}

// KeyPEM encodes a private key (PKCS#8).
func KeyPEM(k crypto.Signer) ([]byte, error) {
	b, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: b}), nil
}

// ParseCert reads the first certificate of a PEM bundle.
func ParseCert(p []byte) (*x509.Certificate, error) {
	for {
		var b *pem.Block
		b, p = pem.Decode(p)
		if b == nil {
			return nil, errors.New("no PEM CERTIFICATE block")
		}
		if b.Type == "CERTIFICATE" {
			return x509.ParseCertificate(b.Bytes)
		}
	}
}

// ParseKey reads a PEM private key (PKCS#8, EC or PKCS#1).
func ParseKey(p []byte) (crypto.Signer, error) {
	b, _ := pem.Decode(p)
	if b == nil {
		return nil, errors.New("no PEM private key block")
	}
	if k, err := x509.ParsePKCS8PrivateKey(b.Bytes); err == nil {
		if s, ok := k.(crypto.Signer); ok {
			return s, nil
		}
	}
	if k, err := x509.ParseECPrivateKey(b.Bytes); err == nil {
		return k, nil
	}
	if k, err := x509.ParsePKCS1PrivateKey(b.Bytes); err == nil {
		return k, nil
	}
	return nil, fmt.Errorf("PEM block %q is not a private key this build reads (PKCS#8, EC or PKCS#1)", b.Type)
}

func encodeCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err)
	}
	return n
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	type eq interface{ Equal(crypto.PublicKey) bool }
	if e, ok := a.(eq); ok {
		return e.Equal(b)
	}
	return false
}
