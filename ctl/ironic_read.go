package ctl

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/ports"
	"github.com/gophercloud/gophercloud/v2/pagination"
)

// ironicMicroversion is what import ironic asks for: node names (1.5),
// fields (1.8), ports' pxe_enabled (1.19), automated_clean (1.47).
const ironicMicroversion = "1.47"

// The node and port fields the import reads: one call per page, whatever
// the number of nodes.
var (
	ironicNodeFields = []string{"uuid", "name", "driver", "driver_info", "provision_state", "power_state",
		"maintenance", "maintenance_reason", "properties", "instance_info", "extra", "automated_clean"}
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

// ironicInventory is what one read of Ironic returned.
type ironicInventory struct {
	Nodes []ironicNode
	Ports []ironicPort
	Calls int64 // HTTP requests to Ironic
}

// readIronic lists every node and port, page by page; token "" is noauth,
// else it is sent as X-Auth-Token.
func readIronic(ctx context.Context, endpoint, token string) (*ironicInventory, error) {
	ep := strings.TrimSuffix(strings.TrimSuffix(endpoint, "/"), "/v1") + "/v1/"
	sc, err := noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: ep})
	if err != nil {
		return nil, fmt.Errorf("--ironic-url %q: %v", endpoint, err)
	}
	sc.Microversion = ironicMicroversion
	rt := &readOnlyTransport{next: http.DefaultTransport}
	sc.ProviderClient.HTTPClient = http.Client{Timeout: 2 * time.Minute, Transport: rt}
	if token != "" {
		sc.ProviderClient.SetToken(token)
	}
	inv := &ironicInventory{}
	err = nodes.List(sc, nodes.ListOpts{Fields: ironicNodeFields}).EachPage(ctx, func(_ context.Context, p pagination.Page) (bool, error) {
		var page []ironicNode
		if err := nodes.ExtractNodesInto(p, &page); err != nil {
			return false, err
		}
		inv.Nodes = append(inv.Nodes, page...)
		return true, nil
	})
	if err != nil {
		return nil, ironicError(ep, "list nodes", err)
	}
	err = ports.List(sc, ports.ListOpts{Fields: ironicPortFields}).EachPage(ctx, func(_ context.Context, p pagination.Page) (bool, error) {
		var page []ironicPort
		if err := ports.ExtractPortsInto(p, &page); err != nil {
			return false, err
		}
		inv.Ports = append(inv.Ports, page...)
		return true, nil
	})
	if err != nil {
		return nil, ironicError(ep, "list ports", err)
	}
	inv.Calls = rt.calls.Load()
	return inv, nil
}

// ironicError says what failed and what to check.
func ironicError(ep, what string, err error) error {
	var hint string
	switch {
	case gophercloud.ResponseCodeIs(err, http.StatusUnauthorized), gophercloud.ResponseCodeIs(err, http.StatusForbidden):
		hint = "Ironic refused the token: give a valid Keystone token with --ironic-token-file (none for noauth)"
	case gophercloud.ResponseCodeIs(err, http.StatusNotAcceptable):
		hint = "Ironic does not serve API microversion " + ironicMicroversion + " (Ironic 11.1 \"Rocky\" or newer is needed)"
	default:
		hint = "check --ironic-url (Ironic's API endpoint, e.g. http://ironic:6385) and that Ironic answers"
	}
	return withHints(failf("Ironic at %s: %s: %v", ep, what, err), hint)
}
