package bench

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/rackfence/rackfence/internal/pki"
	"github.com/rackfence/rackfence/shared/wire"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// Target is something that accepts one write of a ~200-byte value.
type Target interface {
	Name() string
	// Put writes the value for key number i.
	Put(ctx context.Context, i int) error
}

// NewHTTPClient returns the one HTTP client every target uses, with enough
// idle connections for conns concurrent clients.
func NewHTTPClient(conns int) *http.Client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns * 2,
		MaxIdleConnsPerHost: conns * 2,
		IdleConnTimeout:     90 * time.Second,
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// NewHTTPClientFor is NewHTTPClient for a rackfence cluster reached with
// token text: when the token pins the cluster CA (rf1-…, shared/wire
// token.go), the client trusts that CA for https:// URLs.
func NewHTTPClientFor(conns int, token string) *http.Client {
	c := NewHTTPClient(conns)
	if _, pin := wire.ParseToken(token); pin != "" {
		cfg, err := pki.ClientTLS(nil, pin)
		if err == nil {
			// HTTP/1.1, like the plaintext targets it is compared with:
			// the comparison measures TLS, not HTTP/2 (which costs the
			// server more per request: 0.79× instead of 0.97× at 16
			// clients, docs/performance.md).
			tr := c.Transport.(*http.Transport)
			tr.TLSClientConfig = cfg
		}
	}
	return c
}

// ValueSize is the body size of every write, as the issue specifies.
const ValueSize = 200

// Rackfence writes hosts with PUT /v1/hosts/{name}.
type Rackfence struct {
	URL    string // the leader's API URL
	Token  string
	Rack   string
	Prefix string
	Client *http.Client
}

// Name implements Target.
func (r *Rackfence) Name() string { return "rackfence" }

// HostBody returns the ~200-byte JSON host spec for key i.
func HostBody(prefix, rack string, i int) []byte {
	name := fmt.Sprintf("%s-%06d", prefix, i)
	b := fmt.Sprintf(`{"name":%q,"rack":%q,"bmc":{"address":"redfish+http://127.0.0.1:%d/redfish/v1/Systems/1","credentials":"bench"},"bootMACAddress":"52:54:00:%02x:%02x:%02x","online":true,"consumer":"`,
		name, rack, 9000+i%1000, (i>>16)&0xff, (i>>8)&0xff, i&0xff)
	pad := ValueSize - len(b) - 2
	if pad < 1 {
		pad = 1
	}
	return []byte(b + strings.Repeat("x", pad) + `"}`)
}

// Put implements Target.
func (r *Rackfence) Put(ctx context.Context, i int) error {
	body := HostBody(r.Prefix, r.Rack, i)
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, fmt.Sprintf("%s/v1/hosts/%s-%06d", r.URL, r.Prefix, i), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+r.Token)
	req.Header.Set("Content-Type", "application/json")
	return do(r.Client, req)
}

// Etcd writes keys through etcd v3's JSON gateway.
type Etcd struct {
	URL    string
	Prefix string
	Client *http.Client
	value  string
}

// Name implements Target.
func (e *Etcd) Name() string { return "etcd" }

// Put implements Target.
func (e *Etcd) Put(ctx context.Context, i int) error {
	if e.value == "" {
		e.value = base64.StdEncoding.EncodeToString(HostBody(e.Prefix, "bench", 0))
	}
	key := base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("/%s/%06d", e.Prefix, i)))
	body, _ := json.Marshal(map[string]string{"key": key, "value": e.value})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL+"/v3/kv/put", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	return do(e.Client, req)
}

func do(c *http.Client, req *http.Request) error {
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d %s", req.Method, req.URL.Path, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return nil
}
