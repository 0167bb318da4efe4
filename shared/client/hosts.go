package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/rackfence/rackfence/shared/wire"
)

// HostFilter narrows ListHosts; empty fields match everything.
type HostFilter struct {
	Rack  string
	State string // provisioning state
	// Selector is a label selector (wire.ParseSelector's syntax), e.g.
	// "role=compute,zone!=a".
	Selector string
}

// ListHosts lists hosts: GET /v1/hosts?rack=&state=&selector=.
func (c *Client) ListHosts(ctx context.Context, f HostFilter) (*wire.List[wire.Host], error) {
	q := url.Values{}
	if f.Rack != "" {
		q.Set(wire.ParamRack, f.Rack)
	}
	if f.State != "" {
		q.Set(wire.ParamState, f.State)
	}
	if f.Selector != "" {
		q.Set(wire.ParamSelector, f.Selector)
	}
	return getList[wire.Host](ctx, c, "/v1/hosts", q)
}

// GetHost reads one host: GET /v1/hosts/{name}.
func (c *Client) GetHost(ctx context.Context, name string) (*wire.Host, error) {
	var h wire.Host
	if _, err := c.call(ctx, http.MethodGet, "/v1/hosts/"+seg(name), nil, nil, &h); err != nil {
		return nil, err
	}
	return &h, nil
}

// ApplyHost creates or updates a host's spec: PUT /v1/hosts/{h.Name}. It
// returns the stored host and whether it was created (201) rather than
// updated (200). Status and intents in h are ignored by the coordinator.
func (c *Client) ApplyHost(ctx context.Context, h *wire.Host) (*wire.Host, bool, error) {
	var out wire.Host
	st, err := c.call(ctx, http.MethodPut, "/v1/hosts/"+seg(h.Name), nil, h, &out)
	if err != nil {
		return nil, false, err
	}
	return &out, st == http.StatusCreated, nil
}

// DeleteHost asks for a host's deletion: DELETE /v1/hosts/{name}. done is
// true when the record is already gone (200); false when the deletion was
// requested and the rack agent will finish it (202).
func (c *Client) DeleteHost(ctx context.Context, name string) (done bool, err error) {
	return c.DeleteHostForce(ctx, name, false)
}

// DeleteHostForce is DeleteHost; force deletes a host whose BMC runs a
// recorded task of any kind, which is refused without it (409
// bmc_task_running).
func (c *Client) DeleteHostForce(ctx context.Context, name string, force bool) (done bool, err error) {
	var q url.Values
	if force {
		q = url.Values{wire.ParamForce: {"true"}}
	}
	st, err := c.call(ctx, http.MethodDelete, "/v1/hosts/"+seg(name), q, nil, nil)
	if err != nil {
		return false, err
	}
	return st != http.StatusAccepted, nil
}

// ReportStatus writes an agent's status report for a host: PUT
// /v1/hosts/{name}/status. A stale epoch answers 409 (IsStaleEpoch).
func (c *Client) ReportStatus(ctx context.Context, name string, r wire.StatusReport) error {
	_, err := c.call(ctx, http.MethodPut, "/v1/hosts/"+seg(name)+"/status", nil, r, nil)
	return err
}

// Events lists a host's events, newest last: GET /v1/hosts/{name}/events,
// every page (allPages).
func (c *Client) Events(ctx context.Context, name string) (*wire.List[wire.Event], error) {
	return allPages[wire.Event](ctx, c, "/v1/hosts/"+seg(name)+"/events", 0)
}
