package main

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAPIHTTP2Settings reads the SETTINGS frame the API server sends a new
// HTTP/2 connection: the default 4 KiB decoder table (a client may use it
// before it acknowledges any smaller one), frames of at most 16 KiB
// (http2Config). A large body with many headers still goes through, and
// requests sent at once on a fresh connection are all answered.
func TestAPIHTTP2Settings(t *testing.T) {
	_, _, _, pool, pair := writePKI(t, t.TempDir())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srvTLS := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		sum := sha256.Sum256(b)
		fmt.Fprintf(w, "%s %s %s", r.Proto, hex.EncodeToString(sum[:]), r.Header.Get("X-Header-19"))
	})
	hs, _ := serveAPI(ln, h, srvTLS, slog.New(slog.DiscardHandler))
	defer hs.Close()
	addr := ln.Addr().String()

	// The server's first frame on a new connection is its SETTINGS.
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if p := conn.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("ALPN negotiated %q, want h2", p)
	}
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte{0, 0, 0, 4, 0, 0, 0, 0, 0}); err != nil { // empty SETTINGS
		t.Fatal(err)
	}
	var hdr [9]byte
	if _, err := io.ReadFull(conn, hdr[:]); err != nil {
		t.Fatal(err)
	}
	n := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
	if hdr[3] != 4 || n%6 != 0 {
		t.Fatalf("first frame: type %d, length %d; want SETTINGS (type 4)", hdr[3], n)
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(conn, payload); err != nil {
		t.Fatal(err)
	}
	settings := map[uint16]uint32{}
	for i := 0; i < n; i += 6 {
		settings[binary.BigEndian.Uint16(payload[i:])] = binary.BigEndian.Uint32(payload[i+2:])
	}
	const headerTableSize, maxFrameSize = 0x1, 0x5
	if v, ok := settings[headerTableSize]; ok && v != 4096 {
		t.Errorf("SETTINGS_HEADER_TABLE_SIZE = %d, want 4096 (the default, or not sent)", v)
	}
	if v, ok := settings[maxFrameSize]; !ok || v != 16<<10 {
		t.Errorf("SETTINGS_MAX_FRAME_SIZE = %d (sent %v), want 16384", v, ok)
	}

	// A 2 MiB body and 20 long headers over HTTP/2.
	body := bytes.Repeat([]byte("rackfence-"), 200<<10)
	req, _ := http.NewRequest(http.MethodPost, "https://"+addr+"/", bytes.NewReader(body))
	for i := range 20 {
		req.Header.Set(fmt.Sprintf("X-Header-%d", i), strings.Repeat(fmt.Sprint(i), 200))
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	for range 3 { // the same connection again: no table state to go wrong
		resp, err := c.Do(req.Clone(req.Context()))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		sum := sha256.Sum256(body)
		want := "HTTP/2.0 " + hex.EncodeToString(sum[:]) + " " + strings.Repeat("19", 200)
		if string(got) != want {
			t.Fatalf("answer %.100q…, want %.100q…", got, want)
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
	}

	// Requests at once on fresh connections, from net/http's client with
	// its default 4 KiB encoder table.
	for range 10 {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
		c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
		errs := make(chan error, 8)
		for i := range cap(errs) {
			go func() {
				req, _ := http.NewRequest(http.MethodGet, "https://"+addr+"/", nil)
				req.Header.Set("X-Header-19", fmt.Sprint("at-once-", i))
				resp, err := c.Do(req)
				if err == nil {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				errs <- err
			}()
		}
		for range cap(errs) {
			if err := <-errs; err != nil {
				t.Errorf("a request sent at once with others on a fresh connection: %v", err)
			}
		}
		tr.CloseIdleConnections()
	}
}
