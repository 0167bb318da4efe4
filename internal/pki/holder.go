package pki

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"
)

// Holder keeps the current certificate of a member or agent and hands it to
// crypto/tls on every handshake, so a renewal takes effect on the next
// connection with no restart.
type Holder struct {
	cur      atomic.Pointer[tls.Certificate]
	renewals atomic.Int64
}

// NewHolder returns a holder of the PEM certificate (chain) and key.
func NewHolder(certPEM, keyPEM []byte) (*Holder, error) {
	h := &Holder{}
	return h, h.Set(certPEM, keyPEM)
}

// Set replaces the certificate.
func (h *Holder) Set(certPEM, keyPEM []byte) error {
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return err
	}
	if c.Leaf == nil {
		if c.Leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
			return err
		}
	}
	h.cur.Store(&c)
	return nil
}

// Leaf is the current certificate (nil before Set).
func (h *Holder) Leaf() *x509.Certificate {
	if c := h.cur.Load(); c != nil {
		return c.Leaf
	}
	return nil
}

// GetCertificate is tls.Config.GetCertificate.
func (h *Holder) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := h.cur.Load(); c != nil {
		return c, nil
	}
	return nil, errors.New("no certificate yet")
}

// GetClientCertificate is tls.Config.GetClientCertificate.
func (h *Holder) GetClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	if c := h.cur.Load(); c != nil {
		return c, nil
	}
	return &tls.Certificate{}, nil // no certificate: the server decides
}

// RenewAt is when the current certificate should be renewed: two thirds
// into its lifetime.
func (h *Holder) RenewAt() time.Time {
	l := h.Leaf()
	if l == nil {
		return time.Now()
	}
	life := l.NotAfter.Sub(l.NotBefore)
	return l.NotBefore.Add(life * 2 / 3)
}

// Renewer obtains a fresh certificate and key (PEM).
type Renewer func(ctx context.Context) (certPEM, keyPEM []byte, err error)

// RenewLoop renews the certificate at RenewAt until ctx ends. A failed
// renewal is retried after a tenth of the time left (between 1 s and
// 1 min), so retries quicken as expiry nears, and logged; onRenew, when set, sees every new pair (to store it).
func (h *Holder) RenewLoop(ctx context.Context, renew Renewer, onRenew func(certPEM, keyPEM []byte), log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	wait := time.Until(h.RenewAt())
	for {
		t := time.NewTimer(max(wait, 0))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		certPEM, keyPEM, err := renew(ctx)
		if err == nil {
			err = h.Set(certPEM, keyPEM)
		}
		if err != nil {
			retry := time.Minute
			if l := h.Leaf(); l != nil {
				retry = min(max(time.Until(l.NotAfter)/10, time.Second), time.Minute)
				log.Warn("certificate renewal failed; retrying", "err", err.Error(), "retryIn", retry.String(), "expires", l.NotAfter)
			}
			wait = retry
			continue
		}
		h.renewals.Add(1)
		if onRenew != nil {
			onRenew(certPEM, keyPEM)
		}
		log.Info("certificate renewed", "notAfter", h.Leaf().NotAfter, "renewAt", h.RenewAt())
		wait = time.Until(h.RenewAt())
	}
}
