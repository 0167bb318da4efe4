package agent

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/testenv"
)

type setter struct {
	mu   sync.Mutex
	toks []string
}

func (s *setter) SetToken(t string) { s.mu.Lock(); s.toks = append(s.toks, t); s.mu.Unlock() }
func (s *setter) got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.toks...)
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuf) Write(p []byte) (int, error) { b.mu.Lock(); defer b.mu.Unlock(); return b.b.Write(p) }
func (b *syncBuf) String() string              { b.mu.Lock(); defer b.mu.Unlock(); return b.b.String() }

// TestTokenFileReload drives TokenFile with a real file: rename over,
// SIGHUP delivery, an empty file, and checks the log never holds a token.
func TestTokenFileReload(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.token")
	write := func(s string) {
		tmp := path + ".new"
		if err := os.WriteFile(tmp, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	old := strings.Repeat("a", 64)
	write(old + "\n")
	var logs syncBuf
	st := &setter{}
	w, tok, err := NewTokenFile(path, st, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil || tok != old {
		t.Fatalf("first read: %q %v", tok, err)
	}
	if w.Reload("test") || len(st.got()) != 0 {
		t.Fatal("an unchanged file replaced the token")
	}

	// SIGHUP (a channel here; main wires signal.Notify) with a long poll:
	// only the signal can pick the change up.
	w.Interval = time.Hour
	hup := make(chan os.Signal, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx, hup); close(done) }()
	second := "rf1-" + strings.Repeat("c", 64) + "-" + strings.Repeat("b", 64)
	write(second + "\n")
	hup <- syscall.SIGHUP
	testenv.Eventually(t, 30*time.Second, "the token set after SIGHUP", func() error {
		if len(st.got()) == 0 {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	cancel()
	<-done
	if g := st.got(); len(g) != 1 || g[0] != second {
		t.Fatalf("after SIGHUP the client got %q", g)
	}
	if !strings.Contains(logs.String(), "reason=SIGHUP") || !strings.Contains(logs.String(), "tokenID="+TokenID(strings.Repeat("b", 64))) {
		t.Fatalf("log: %s", logs.String())
	}

	// An empty file keeps the token (one warning); the poll picks up the
	// next good content.
	write("\n")
	if w.Reload("poll") || w.Reload("poll") {
		t.Fatal("an empty file replaced the token")
	}
	write("third\n")
	if !w.Reload("poll") || st.got()[1] != "third" {
		t.Fatalf("third: %q", st.got())
	}
	out := logs.String()
	if strings.Count(out, "cannot read the token file") != 1 || !strings.Contains(out, "readable again") {
		t.Fatalf("log: %s", out)
	}
	for _, secret := range []string{old, strings.Repeat("b", 64), "third"} {
		if strings.Contains(out, secret) {
			t.Fatalf("the log holds a token: %s", out)
		}
	}
}
