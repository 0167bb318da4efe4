package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/rackfence/rackfence/internal/pki"
	"github.com/rackfence/rackfence/shared/client"
)

// CertIssuer is what enrolment needs of the API client.
type CertIssuer interface {
	// EnrollAgent obtains a certificate into the holder (one attempt).
	EnrollAgent(ctx context.Context, h *pki.Holder, agentID string) error
	IssueAgentCert(ctx context.Context, agentID string) (certPEM, keyPEM []byte, err error)
	// CloseIdleConnections makes the next request handshake with the new
	// certificate (a kept-alive connection keeps the old one).
	CloseIdleConnections()
}

// Enroll obtains the agent's client certificate with its agent token (the
// coordinator names the token's rack in it) and puts it in holder. It
// retries while no member answers or none leads, and gives up at once on a
// refusal (a bad token, a token of another role). Then RenewCert keeps it
// fresh.
func Enroll(ctx context.Context, c CertIssuer, holder *pki.Holder, agentID string, log *slog.Logger) error {
	bo := newBackoff(500*time.Millisecond, 10*time.Second)
	for attempt := 1; ; attempt++ {
		err := c.EnrollAgent(ctx, holder, agentID)
		if err == nil {
			l := holder.Leaf()
			id, _ := pki.IdentityOf(l)
			log.Info("obtained the agent certificate", "rack", id.Rack, "notAfter", l.NotAfter, "renewAt", holder.RenewAt())
			return nil
		}
		var ce *client.Error
		if errors.As(err, &ce) && ce.Status < 500 && ce.Status != 429 {
			return fmt.Errorf("the coordinator refused this agent's certificate request: %w", err)
		}
		if errors.Is(err, pki.ErrPinMismatch) {
			return err
		}
		wait := bo.next()
		log.Warn("agent certificate request failed; retrying", "attempt", attempt, "retryIn", wait.String(), "err", err.Error())
		if !sleepCtx(ctx, wait) {
			return ctx.Err()
		}
	}
}

// RenewCert renews the agent certificate at two thirds of its lifetime
// until ctx ends, with no restart: the next connection presents the new one.
func RenewCert(ctx context.Context, c CertIssuer, holder *pki.Holder, agentID string, log *slog.Logger) {
	holder.RenewLoop(ctx, func(ctx context.Context) ([]byte, []byte, error) { return c.IssueAgentCert(ctx, agentID) },
		func([]byte, []byte) { c.CloseIdleConnections() }, log.With("cert", "agent"))
}
