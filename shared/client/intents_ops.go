package client

import (
	"context"
	"net/http"

	"github.com/rackfence/rackfence/shared/wire"
)

// Reboot asks for a reboot, or (r.PowerOff) holds the host off for
// r.Requester: POST /v1/hosts/{name}/intents/reboot.
func (c *Client) Reboot(ctx context.Context, name string, r wire.RebootRequest) (*wire.Intent, error) {
	var out wire.Intent
	if _, err := c.call(ctx, http.MethodPost, "/v1/hosts/"+seg(name)+"/intents/"+wire.IntentReboot, nil, &r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ReleasePowerOff withdraws requester's power-off hold: DELETE
// /v1/hosts/{name}/intents/reboot/{requester}. The host powers on again
// once no requester is left (and online is true).
func (c *Client) ReleasePowerOff(ctx context.Context, name, requester string) (*wire.Host, error) {
	var out wire.Host
	if _, err := c.call(ctx, http.MethodDelete, "/v1/hosts/"+seg(name)+"/intents/"+wire.IntentReboot+"/"+seg(requester), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Inspect asks for the hardware of an available host to be read again:
// POST /v1/hosts/{name}/intents/inspect.
func (c *Client) Inspect(ctx context.Context, name string, r wire.IntentRequest) (*wire.Intent, error) {
	return c.intent(ctx, http.MethodPost, name, wire.IntentInspect, &r)
}

// Service asks for a provisioned host's BIOS settings and firmware to be
// brought to its spec once: POST /v1/hosts/{name}/intents/service. The
// answer's Plan states what that does and the power cycles it costs.
func (c *Client) Service(ctx context.Context, name string, r wire.IntentRequest) (*wire.Intent, error) {
	return c.intent(ctx, http.MethodPost, name, wire.IntentService, &r)
}
