package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// DefaultTokenPoll is how often TokenFile checks the token file.
const DefaultTokenPoll = 3 * time.Second

// TokenSetter takes a new token at once (a *client.Client).
type TokenSetter interface{ SetToken(string) }

// TokenFile keeps a client's token equal to the content of the agent's
// --token-file, so an operator rotates the token with no restart: write
// the new token to the file (better: write a new file and rename it over
// the old one), then revoke the old token. The file is read again every
// Interval and on each value received from Reload's channel (SIGHUP); a
// file that is missing, unreadable or empty keeps the current token and
// is logged once. Logs name the token's public id, never the token.
type TokenFile struct {
	Path     string
	Interval time.Duration
	Client   TokenSetter
	Logger   *slog.Logger

	mu      sync.Mutex
	current [32]byte // SHA-256 of the token in use
	broken  bool     // the last read failed (logged once)
}

// NewTokenFile reads path once and returns a TokenFile in sync with it,
// and the token read.
func NewTokenFile(path string, c TokenSetter, log *slog.Logger) (*TokenFile, string, error) {
	tok, err := client.ReadTokenFile(path)
	if err != nil {
		return nil, "", err
	}
	if log == nil {
		log = slog.Default()
	}
	return &TokenFile{Path: path, Interval: DefaultTokenPoll, Client: c, Logger: log, current: sha256.Sum256([]byte(tok))}, tok, nil
}

// Run checks the file every Interval and whenever hup delivers, until ctx
// ends.
func (w *TokenFile) Run(ctx context.Context, hup <-chan os.Signal) {
	iv := w.Interval
	if iv <= 0 {
		iv = DefaultTokenPoll
	}
	tick := time.NewTicker(iv)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			w.Reload("file changed")
		case <-hup:
			w.Logger.Info("SIGHUP: re-reading the token file", "path", w.Path)
			w.Reload("SIGHUP")
		}
	}
}

// Reload reads the file and, when its token differs from the one in use,
// hands it to the client. It reports whether the token changed.
func (w *TokenFile) Reload(reason string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	tok, err := client.ReadTokenFile(w.Path)
	if err != nil {
		if !w.broken {
			w.Logger.Warn("cannot read the token file; keeping the current token", "path", w.Path, "err", err.Error())
			w.broken = true
		}
		return false
	}
	if w.broken {
		w.Logger.Info("the token file is readable again", "path", w.Path)
		w.broken = false
	}
	sum := sha256.Sum256([]byte(tok))
	if sum == w.current {
		return false
	}
	w.current = sum
	w.Client.SetToken(tok)
	w.Logger.Info("agent token replaced from the token file, no restart needed", "path", w.Path, "reason", reason, "tokenID", TokenID(tok))
	return true
}

// TokenID is the public id the coordinator gives token text (the first 16
// hex digits of the SHA-256 of its secret), safe to log.
func TokenID(text string) string {
	secret, _ := wire.ParseToken(text)
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])[:16]
}
