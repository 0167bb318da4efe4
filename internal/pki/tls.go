package pki

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// VerifyChain checks that a peer's chain leads to a CA in roots (any host
// name) and returns the leaf's identity. usage is the extended key usage
// the leaf must allow.
func VerifyChain(certs []*x509.Certificate, roots *x509.CertPool, usage x509.ExtKeyUsage) (Identity, error) {
	if len(certs) == 0 {
		return Identity{}, errors.New("the peer presented no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	if _, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
		return Identity{}, err
	}
	return IdentityOf(certs[0])
}

// MemberVerifier is a tls.Config.VerifyConnection that admits only members
// of the cluster whose CA is in roots: used on both ends of Raft (where
// InsecureSkipVerify turns off the host-name check, since members are
// known by identity, not by address) and by followers forwarding to the
// leader.
func MemberVerifier(roots *x509.CertPool, server bool) func(tls.ConnectionState) error {
	usage := x509.ExtKeyUsageServerAuth
	if server {
		usage = x509.ExtKeyUsageClientAuth
	}
	return func(cs tls.ConnectionState) error {
		id, err := VerifyChain(cs.PeerCertificates, roots, usage)
		if err != nil {
			return err
		}
		if id.Kind != KindMember {
			return fmt.Errorf("%w: it names %s", ErrNotMember, id)
		}
		return nil
	}
}

// ClientTLS is the TLS config a client of the API uses: it trusts the CA in
// caPEM when given, else a CA pinned by its SHA-256 (hex) when pin is
// given, else the system roots. Host names are checked in every case.
func ClientTLS(caPEM []byte, pin string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	switch {
	case len(caPEM) > 0:
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caPEM) {
			return nil, errors.New("the CA file holds no PEM certificate")
		}
		cfg.RootCAs = pool
	case pin != "":
		want, err := hex.DecodeString(strings.ToLower(pin))
		if err != nil || len(want) != 32 {
			return nil, fmt.Errorf("CA fingerprint %q is not 64 hex digits (a SHA-256)", pin)
		}
		cfg.InsecureSkipVerify = true // replaced by VerifyConnection below
		cfg.VerifyConnection = func(cs tls.ConnectionState) error { return verifyPinned(cs, want) }
	}
	return cfg, nil
}

// verifyPinned finds the pinned CA in the chain the server sent and checks
// the leaf against it, host name included.
func verifyPinned(cs tls.ConnectionState, want []byte) error {
	var ca *x509.Certificate
	for _, c := range cs.PeerCertificates {
		if h := hexSum(c.Raw); bytes.Equal(h, want) {
			ca = c
			break
		}
	}
	if ca == nil {
		return fmt.Errorf("%w %x: is this the right cluster? (a server that does not send its CA in the chain needs --ca-file)", ErrPinMismatch, want)
	}
	if len(cs.PeerCertificates) == 0 {
		return errors.New("the server presented no certificate")
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	opts := x509.VerifyOptions{Roots: roots, DNSName: cs.ServerName}
	if cs.PeerCertificates[0] == ca {
		return errors.New("the server presented its CA certificate as its own")
	}
	_, err := cs.PeerCertificates[0].Verify(opts)
	return err
}
