package importer

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/ports"
)

// ironicMicroversion is what import ironic asks for: node names (1.5),
// fields (1.8), ports' pxe_enabled (1.19), boot_interface (1.31),
// automated_clean (1.47).
const ironicMicroversion = "1.47"

// The node and port fields the import reads: one call per page, whatever
// the number of nodes.
var (
	ironicNodeFields = []string{"uuid", "name", "driver", "driver_info", "provision_state", "power_state",
		"maintenance", "maintenance_reason", "properties", "instance_info", "extra", "automated_clean", "boot_interface"}
	ironicPortFields = []string{"address", "node_uuid", "pxe_enabled"}
)

// readOnlyTransport sends GETs only (an import never changes Ironic) and
// counts them.
type readOnlyTransport struct {
	next  http.RoundTripper
	calls atomic.Int64
}

func (t *readOnlyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodGet {
		return nil, fmt.Errorf("import ironic only reads: refusing %s %s", r.Method, r.URL.Path)
	}
	t.calls.Add(1)
	return t.next.RoundTrip(r)
}

// IronicInventory is what one read of Ironic returned.
type IronicInventory struct {
	Nodes []ironicNode
	Ports []ironicPort
	Calls int64 // HTTP requests to Ironic
}

// ReadIronic lists every node and port, page by page (pageSize 0:
// Ironic's [api]max_limit); token "" is noauth, else it is sent as
// X-Auth-Token; cas, when not nil, are the CAs trusted for an https://
// endpoint instead of the system's.
func ReadIronic(ctx context.Context, endpoint, token string, pageSize int, cas *x509.CertPool) (*IronicInventory, error) {
	ep := strings.TrimSuffix(strings.TrimSuffix(endpoint, "/"), "/v1") + "/v1/"
	sc, err := noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: ep})
	if err != nil {
		return nil, fmt.Errorf("--ironic-url %q: %v", endpoint, err)
	}
	sc.Microversion = ironicMicroversion
	var next http.RoundTripper = http.DefaultTransport
	if cas != nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = &tls.Config{RootCAs: cas, MinVersion: tls.VersionTLS12}
		next = tr
	}
	rt := &readOnlyTransport{next: next}
	sc.ProviderClient.HTTPClient = http.Client{Timeout: 2 * time.Minute, Transport: rt}
	if token != "" {
		sc.ProviderClient.SetToken(token)
	}
	inv := &IronicInventory{}
	// Ironic links the next page as the collection's "next" (not
	// gophercloud's nodes_links/ports_links): follow it until there is none.
	q, _ := gophercloud.BuildQueryString(nodes.ListOpts{Fields: ironicNodeFields, Limit: pageSize})
	if err := eachPage(ctx, sc, sc.ServiceURL("nodes")+q.String(), func(b pageBody) { inv.Nodes = append(inv.Nodes, b.Nodes...) }); err != nil {
		return nil, ironicError(ep, "list nodes", err)
	}
	q, _ = gophercloud.BuildQueryString(ports.ListOpts{Fields: ironicPortFields, Limit: pageSize})
	if err := eachPage(ctx, sc, sc.ServiceURL("ports")+q.String(), func(b pageBody) { inv.Ports = append(inv.Ports, b.Ports...) }); err != nil {
		return nil, ironicError(ep, "list ports", err)
	}
	inv.Calls = rt.calls.Load()
	return inv, nil
}

// pageBody is one page of GET /v1/nodes or /v1/ports.
type pageBody struct {
	Nodes []ironicNode `json:"nodes"`
	Ports []ironicPort `json:"ports"`
	Next  string       `json:"next"`
}

// eachPage GETs url and every next page after it.
func eachPage(ctx context.Context, sc *gophercloud.ServiceClient, url string, f func(pageBody)) error {
	seen := map[string]bool{}
	for url != "" {
		if seen[url] {
			return fmt.Errorf("Ironic's next page %s was already read", url)
		}
		seen[url] = true
		var b pageBody
		if _, err := sc.Get(ctx, url, &b, &gophercloud.RequestOpts{OkCodes: []int{http.StatusOK}}); err != nil {
			return err
		}
		f(b)
		url = b.Next
	}
	return nil
}

// IronicError is a failed read of Ironic: what failed, and what to check.
type IronicError struct {
	Err  error
	Hint string
}

func (e *IronicError) Error() string { return e.Err.Error() }
func (e *IronicError) Unwrap() error { return e.Err }

// ironicError says what failed and what to check.
func ironicError(ep, what string, err error) error {
	var hint string
	switch {
	case gophercloud.ResponseCodeIs(err, http.StatusUnauthorized), gophercloud.ResponseCodeIs(err, http.StatusForbidden):
		hint = "Ironic refused the token: give a valid Keystone token with --ironic-token-file (none for noauth)"
	case gophercloud.ResponseCodeIs(err, http.StatusNotAcceptable):
		hint = "Ironic does not serve API microversion " + ironicMicroversion + " (Ironic 11.1 \"Rocky\" or newer is needed)"
	case errors.As(err, new(*tls.CertificateVerificationError)):
		hint = "Ironic's certificate is not signed by a CA this host trusts: give that CA with --ironic-ca-file"
	default:
		hint = "check --ironic-url (Ironic's API endpoint, e.g. http://ironic:6385) and that Ironic answers"
	}
	return &IronicError{Err: fmt.Errorf("Ironic at %s: %s: %v", ep, what, err), Hint: hint}
}
