package client

import (
	"context"
	"net/http"

	"github.com/rackfence/rackfence/shared/api"
)

// Reboot asks for a reboot, or (r.PowerOff) holds the host off for
// r.Requester: POST /v1/hosts/{name}/intents/reboot.
func (c *Client) Reboot(ctx context.Context, name string, r api.RebootRequest) (*api.Intent, error) {
	var out api.Intent
	if _, err := c.call(ctx, http.MethodPost, "/v1/hosts/"+seg(name)+"/intents/"+api.IntentReboot, nil, &r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ReleasePowerOff withdraws requester's power-off hold: DELETE
// /v1/hosts/{name}/intents/reboot/{requester}. The host powers on again
// once no requester is left (and online is true).
func (c *Client) ReleasePowerOff(ctx context.Context, name, requester string) (*api.Host, error) {
	var out api.Host
	if _, err := c.call(ctx, http.MethodDelete, "/v1/hosts/"+seg(name)+"/intents/"+api.IntentReboot+"/"+seg(requester), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Inspect asks for the hardware of an available host to be read again:
// POST /v1/hosts/{name}/intents/inspect.
func (c *Client) Inspect(ctx context.Context, name string, r api.IntentRequest) (*api.Intent, error) {
	return c.intent(ctx, http.MethodPost, name, api.IntentInspect, &r)
}
