package daemon

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestPprofListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var status int
	var body string
	p := Program{Name: "prog", Common: &Common{}, Stderr: io.Discard, Stdout: io.Discard,
		Run: func(ctx context.Context, log *slog.Logger) error {
			c := &http.Client{Timeout: 30 * time.Second}
			resp, err := c.Get("http://" + addr + "/debug/pprof/cmdline")
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			status, body = resp.StatusCode, string(b)
			return nil
		}}
	if got := p.Main([]string{"--pprof-addr", addr}); got != ExitOK || status != http.StatusOK || body == "" {
		t.Fatalf("pprof: exit %d, status %d, body %q", got, status, body)
	}
	// The listener is closed when Main returns.
	if c, err := net.DialTimeout("tcp", addr, 5*time.Second); err == nil {
		c.Close()
		t.Fatal("the pprof listener still accepts after Main returned")
	}
	// An address that cannot be bound fails the start (exit 1), naming the flag.
	hold, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	var errb bytes.Buffer
	ran := false
	p = Program{Name: "prog", Common: &Common{}, Stderr: &errb, Stdout: io.Discard,
		Run: func(context.Context, *slog.Logger) error { ran = true; return nil }}
	if got := p.Main([]string{"--pprof-addr", hold.Addr().String()}); got != ExitFailed || ran || !strings.Contains(errb.String(), "--pprof-addr") {
		t.Fatalf("busy --pprof-addr: exit %d ran %v: %s", got, ran, &errb)
	}
}
