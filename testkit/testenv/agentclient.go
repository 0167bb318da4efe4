package testenv

import (
	"context"

	"github.com/rackfence/rackfence/internal/pki"
	"github.com/rackfence/rackfence/shared/client"
)

// AgentClient returns a client for an agent token that presents the
// agent's client certificate, obtained now (one attempt) when a member URL
// is https://. Over plain HTTP (--insecure-plaintext) it is client.New(cfg).
// The holder is returned for renewal (pki.Holder.RenewLoop).
func AgentClient(ctx context.Context, cfg client.Config, agentID string) (*client.Client, *pki.Holder, error) {
	h := &pki.Holder{}
	cfg.ClientCertificate = h.GetClientCertificate
	c, err := client.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	if !c.TLS() {
		return c, h, nil
	}
	if err := c.EnrollAgent(ctx, h, agentID); err != nil {
		return nil, nil, err
	}
	return c, h, nil
}
