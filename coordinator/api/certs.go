package api

import (
	"net"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/internal/pki"
	"github.com/rackfence/rackfence/shared/wire"
)

// TLSConfig is a member's transport security as the API needs it.
type TLSConfig struct {
	// CA is the cluster's CA with its key: it issues member and agent
	// certificates.
	CA *pki.CA
	// Holder is this member's own certificate (reported by /v1/status).
	Holder *pki.Holder
	// CertValidity is the lifetime of issued certificates (<= 0:
	// pki.DefaultCertValidity).
	CertValidity time.Duration
	// SecretsKeys, when set, returns the credentials keyring (key file
	// format) handed to a joining member.
	SecretsKeys func() ([]byte, error)
}

// issueCertificate: POST /v1/certificates. A member (admin token) gets a
// member certificate and the CA's key; an agent (agent token) gets a client
// certificate naming its token's rack. Renewal is the same call.
func (s *Server) issueCertificate(c echo.Context) error {
	t := s.cfg.TLS
	if t == nil || t.CA == nil || t.CA.Key == nil {
		return errf(http.StatusConflict, wire.CodeConflict, "this member serves --insecure-plaintext and has no CA: certificates are issued only by a cluster running TLS")
	}
	var req wire.CertificateRequest
	if err := bind(c, &req, false); err != nil {
		return err
	}
	if req.ID == "" || len(req.ID) > 253 || !printable(req.ID) {
		return badField("id", "is required: the member's node ID or the agent's ID, 1 to 253 printable characters")
	}
	if req.CSR == "" {
		return badField("csr", "is required: a PEM CERTIFICATE REQUEST signed by the new key")
	}
	id := who(c)
	r := pki.Request{Validity: t.CertValidity}
	switch req.Kind {
	case wire.CertKindMember:
		if err := need(c, wire.RoleAdmin, false, ""); err != nil {
			return err
		}
		r.Identity = pki.Identity{Kind: pki.KindMember, Name: req.ID}
		for i, h := range req.Hosts {
			if ip := net.ParseIP(h); ip != nil {
				r.IPs = append(r.IPs, ip)
			} else if h != "" && len(h) <= 253 && printable(h) {
				r.DNSNames = append(r.DNSNames, h)
			} else {
				return badField("hosts", "entry %d (%q) is neither an IP address nor a DNS name", i, h)
			}
		}
	case wire.CertKindAgent:
		if id.Role != wire.RoleAgent {
			return forbidden("an agent certificate is issued only to an agent token (it names the token's rack); this token has role %s", id.Role)
		}
		if len(req.Hosts) > 0 {
			return badField("hosts", "applies only to kind member")
		}
		r.Identity = pki.Identity{Kind: pki.KindAgent, Name: req.ID, Rack: id.Rack}
	default:
		return badField("kind", "%q is not a certificate kind: use member or agent", req.Kind)
	}
	chain, cert, err := t.CA.IssueCSR([]byte(req.CSR), r)
	if err != nil {
		return badField("csr", "cannot be signed: %v", err)
	}
	out := wire.CertificateResponse{Certificate: string(chain), CA: string(t.CA.CertPEM),
		CAFingerprint: t.CA.Fingerprint(), NotAfter: cert.NotAfter}
	if req.Kind == wire.CertKindMember {
		out.CAKey = string(t.CA.KeyPEM)
		if t.SecretsKeys != nil {
			b, err := t.SecretsKeys()
			if err != nil {
				return err
			}
			out.SecretsKeys = string(b)
		}
	}
	s.log.Info("certificate issued", "kind", req.Kind, "id", req.ID, "rack", r.Identity.Rack, "notAfter", cert.NotAfter, "by", actor(c))
	return c.JSON(http.StatusCreated, out)
}

func printable(s string) bool {
	for _, r := range s {
		if r < 0x21 || r == 0x7f {
			return false
		}
	}
	return true
}

// tlsStatus is the TLS part of /v1/status, with the warning an operator of
// a plaintext cluster must see.
func (s *Server) tlsStatus() (wire.TLSStatus, []string) {
	t := s.cfg.TLS
	if t == nil {
		return wire.TLSStatus{}, []string{"insecure-plaintext: the API and Raft run without TLS; any process that reaches these ports can read tokens and BMC passwords and speak Raft to the cluster"}
	}
	st := wire.TLSStatus{Enabled: true}
	if t.CA != nil {
		st.CAFingerprint = t.CA.Fingerprint()
	}
	if t.Holder != nil {
		if l := t.Holder.Leaf(); l != nil {
			st.CertNotAfter = l.NotAfter
		}
	}
	return st, nil
}
