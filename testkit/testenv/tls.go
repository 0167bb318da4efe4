package testenv

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/rackfence/rackfence/internal/pki"
	"github.com/rackfence/rackfence/shared/wire"
)

// HTTPClient is a plain HTTP client for tests that trusts the CA in caFile
// (a coordinator's DATA/tls/ca.crt) once that file exists; with caFile ""
// it is a client for http:// (--insecure-plaintext). It never skips
// verification: a test that reaches a member this way checked its
// certificate.
func HTTPClient(caFile string) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if caFile != "" {
		pool := x509.NewCertPool()
		if b, err := os.ReadFile(caFile); err == nil {
			pool.AppendCertsFromPEM(b)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

var pinned sync.Map // pin -> *http.Client

// ClientForToken returns the bearer secret of token text and an HTTP
// client that trusts the CA the token pins (wire.ParseToken), shared per
// pin so connections are reused; a token without a pin gets a plain client.
func ClientForToken(token string) (*http.Client, string) {
	secret, pin := wire.ParseToken(token)
	if pin == "" {
		return HTTPClient(""), secret
	}
	if c, ok := pinned.Load(pin); ok {
		return c.(*http.Client), secret
	}
	cfg, err := pki.ClientTLS(nil, pin)
	if err != nil {
		panic(err) // ParseToken only returns well-formed pins
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	c, _ := pinned.LoadOrStore(pin, &http.Client{Transport: tr, Timeout: 30 * time.Second})
	return c.(*http.Client), secret
}
