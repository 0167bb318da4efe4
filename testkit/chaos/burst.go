package chaos

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/rackfence/rackfence/internal/pki"
	"github.com/rackfence/rackfence/shared/wire"
)

// FaultConnBurst: bursts of concurrent requests, each burst on fresh
// HTTP/2 connections, from the operators' namespace. This is how a
// standard Go client (net/http, HTTP/2 negotiated by ALPN) starts: its
// first requests on a connection are sent before it has the server's
// SETTINGS, with HPACK's default table. An answer that is a protocol error
// (GOAWAY, COMPRESSION_ERROR, …) or a refused token is a violation of the
// "connections" checker; an unreachable or busy member is not.

// Burst sizes: clients per burst and requests each sends at once.
const (
	burstClients    = 8
	burstConcurrent = 4
	burstEvery      = 500 * time.Millisecond
	burstTimeout    = 5 * time.Second
)

// BurstStats counts what the bursts of one fault saw.
type BurstStats struct {
	Bursts   int      `json:"bursts"`
	Requests int      `json:"requests"`
	OK       int      `json:"ok"`
	Failed   int      `json:"failed"`   // unreachable, timed out, 5xx: not a violation
	Protocol []string `json:"protocol"` // protocol errors and refused tokens: violations
}

func (b *BurstStats) String() string {
	return fmt.Sprintf("%d bursts, %d requests: %d ok, %d failed, %d protocol errors", b.Bursts, b.Requests, b.OK, b.Failed, len(b.Protocol))
}

// protocolError says whether a request's error is the server breaking the
// HTTP/2 protocol with the client, rather than the network or a busy
// member.
func protocolError(err error) bool {
	s := err.Error()
	for _, m := range []string{"GOAWAY", "COMPRESSION_ERROR", "PROTOCOL_ERROR", "FRAME_SIZE_ERROR", "stream error", "INTERNAL_ERROR"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// Bursts runs bursts against the members, round robin, until ctx ends.
func (c *Cluster) Bursts(ctx context.Context) *BurstStats {
	st := &BurstStats{}
	var mu sync.Mutex
	for k := 0; ctx.Err() == nil; k++ {
		url := c.coordURL(k%len(c.Coords)) + "/v1/whoami"
		st.Bursts++
		var wg sync.WaitGroup
		for i := 0; i < burstClients; i++ {
			tr, err := c.burstTransport()
			if err != nil {
				st.Protocol = append(st.Protocol, "transport: "+err.Error())
				return st
			}
			hc := &http.Client{Transport: tr, Timeout: burstTimeout}
			for j := 0; j < burstConcurrent; j++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ok, proto, failed := c.burstOne(ctx, hc, url)
					mu.Lock()
					defer mu.Unlock()
					st.Requests++
					switch {
					case ok:
						st.OK++
					case proto != "":
						st.Protocol = append(st.Protocol, proto)
					case failed:
						st.Failed++
					}
				}()
			}
			defer tr.CloseIdleConnections()
		}
		wg.Wait()
		select {
		case <-ctx.Done():
		case <-time.After(burstEvery):
		}
	}
	return st
}

// burstOne sends one request: ok, a protocol violation (described), or a
// failure that is not one.
func (c *Cluster) burstOne(ctx context.Context, hc *http.Client, url string) (ok bool, proto string, failed bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err.Error(), false
	}
	secret, _ := wire.ParseToken(c.admin)
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return false, "", false // the fault ended mid-request
		}
		if protocolError(err) {
			return false, url + ": " + err.Error(), false
		}
		return false, "", true
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	switch {
	case resp.StatusCode == http.StatusOK && resp.ProtoMajor == 2:
		return true, "", false
	case resp.StatusCode == http.StatusOK:
		return false, fmt.Sprintf("%s: answered over %s, not HTTP/2", url, resp.Proto), false
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return false, fmt.Sprintf("%s: %s for the admin token", url, resp.Status), false
	}
	return false, "", true
}

// burstTransport is a fresh net/http transport in the operators'
// namespace with HTTP/2 negotiated, trusting the cluster CA: a standard
// Go client's first connection.
func (c *Cluster) burstTransport() (*http.Transport, error) {
	_, pin := wire.ParseToken(c.admin)
	cfg, err := pki.ClientTLS(nil, pin)
	if err != nil {
		return nil, err
	}
	return &http.Transport{Proxy: nil, DialContext: c.Net.DialContextIn("cl"), TLSClientConfig: cfg,
		ForceAttemptHTTP2: true, TLSHandshakeTimeout: burstTimeout}, nil
}
