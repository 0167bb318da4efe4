package wire

import "time"

// Certificate kinds of POST /v1/certificates.
const (
	CertKindMember = "member"
	CertKindAgent  = "agent"
)

// CertificateRequest is the body of POST /v1/certificates: a member (admin
// token) or an agent (agent token) asks the cluster's CA for a certificate
// for the key of its CSR. The token decides who the subject is: an agent's
// certificate names the rack of its token, whatever the CSR says.
type CertificateRequest struct {
	// Kind is "member" or "agent".
	Kind string `json:"kind"`
	// ID is the member's node ID or the agent's ID (the lease holder ID).
	ID string `json:"id"`
	// CSR is a PEM CERTIFICATE REQUEST signed by the subject's key.
	CSR string `json:"csr"`
	// Hosts are the DNS names and IP addresses a member's certificate must
	// cover (its API and Raft addresses); agents send none.
	Hosts []string `json:"hosts,omitempty"`
}

// CertificateResponse answers POST /v1/certificates.
type CertificateResponse struct {
	// Certificate is the PEM chain: the new certificate, then the CA.
	Certificate string `json:"certificate"`
	// CA is the cluster CA's certificate (PEM).
	CA string `json:"ca"`
	// CAFingerprint is the hex SHA-256 of the CA certificate.
	CAFingerprint string    `json:"caFingerprint"`
	NotAfter      time.Time `json:"notAfter"`
	// CAKey is the CA's private key (PEM), for members only: every member
	// can then issue and renew certificates whoever leads.
	CAKey string `json:"caKey,omitempty"`
	// SecretsKeys is the keyring that seals credentials (members only), in
	// the key file's format.
	SecretsKeys string `json:"secretsKeys,omitempty"`
}

// TLSStatus is the transport security part of GET /v1/status.
type TLSStatus struct {
	// Enabled is false only under --insecure-plaintext.
	Enabled       bool      `json:"enabled"`
	CAFingerprint string    `json:"caFingerprint,omitempty"`
	CertNotAfter  time.Time `json:"certNotAfter,omitempty"`
}
