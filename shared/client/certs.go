package client

import (
	"context"
	"net/http"

	"github.com/rackfence/rackfence/internal/pki"
	"github.com/rackfence/rackfence/shared/wire"
)

// IssueCertificate asks the cluster's CA for a certificate (POST
// /v1/certificates): a member with an admin token, an agent with its agent
// token. The same call renews.
func (c *Client) IssueCertificate(ctx context.Context, req wire.CertificateRequest) (*wire.CertificateResponse, error) {
	var out wire.CertificateResponse
	if _, err := c.call(ctx, http.MethodPost, "/v1/certificates", nil, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// IssueAgentCert makes a key and asks for an agent certificate for it
// (the coordinator names the token's rack); it returns both as PEM.
func (c *Client) IssueAgentCert(ctx context.Context, agentID string) (certPEM, keyPEM []byte, err error) {
	key, csr, err := pki.NewKey()
	if err != nil {
		return nil, nil, err
	}
	resp, err := c.IssueCertificate(ctx, wire.CertificateRequest{Kind: wire.CertKindAgent, ID: agentID, CSR: string(csr)})
	if err != nil {
		return nil, nil, err
	}
	if keyPEM, err = pki.KeyPEM(key); err != nil {
		return nil, nil, err
	}
	return []byte(resp.Certificate), keyPEM, nil
}

// EnrollAgent obtains an agent certificate (one attempt), puts it in h
// and drops kept-alive connections, so the next request presents it.
func (c *Client) EnrollAgent(ctx context.Context, h *pki.Holder, agentID string) error {
	certPEM, keyPEM, err := c.IssueAgentCert(ctx, agentID)
	if err != nil {
		return err
	}
	if err := h.Set(certPEM, keyPEM); err != nil {
		return err
	}
	c.CloseIdleConnections()
	return nil
}

// CloseIdleConnections drops kept-alive connections, so the next request
// handshakes again: after a client certificate is obtained or renewed
// (a connection keeps the certificate it was opened with).
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }

// TLS reports whether any member URL is https://.
func (c *Client) TLS() bool {
	for _, u := range c.urls {
		if u.Scheme == "https" {
			return true
		}
	}
	return false
}
