package client_test

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/client"
)

// TestTLSServerWithoutHTTP2: a TLS server that does not offer HTTP/2 (a
// proxy in front of the coordinators, say) is still reached, over
// HTTP/1.1, by a client that speaks HTTP/2 to coordinators.
func TestTLSServerWithoutHTTP2(t *testing.T) {
	var h1 atomic.Int64
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 1 {
			h1.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"state":"leader"}`))
	}))
	ts.EnableHTTP2 = false
	ts.StartTLS()
	defer ts.Close()
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(client.Config{Coordinator: ts.URL, Token: "t", CAFile: ca, RetryFor: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 2 {
		if _, err := c.Status(ctx); err != nil {
			t.Fatalf("request %d to a TLS server without HTTP/2: %v", i+1, err)
		}
	}
	if n := h1.Load(); n != 2 {
		t.Errorf("%d of 2 requests answered over HTTP/1.1", n)
	}
}
