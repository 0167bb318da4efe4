package client

import (
	"context"
	"net/http"

	"github.com/rackfence/rackfence/shared/wire"
)

func (c *Client) intent(ctx context.Context, method, name, kind string, r *wire.IntentRequest) (*wire.Intent, error) {
	var in any
	if r != nil {
		in = r
	}
	var out wire.Intent
	if _, err := c.call(ctx, method, "/v1/hosts/"+seg(name)+"/intents/"+kind, nil, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Detach asks that a host stop being managed without being deprovisioned:
// POST /v1/hosts/{name}/intents/detach {reason, force}.
func (c *Client) Detach(ctx context.Context, name string, r wire.IntentRequest) (*wire.Intent, error) {
	return c.intent(ctx, http.MethodPost, name, wire.IntentDetach, &r)
}

// Attach withdraws a detach: DELETE /v1/hosts/{name}/intents/detach.
func (c *Client) Attach(ctx context.Context, name string) error {
	_, err := c.call(ctx, http.MethodDelete, "/v1/hosts/"+seg(name)+"/intents/"+wire.IntentDetach, nil, nil, nil)
	return err
}

// Resume asks for one immediate retry of a host in error: POST
// /v1/hosts/{name}/intents/resume.
func (c *Client) Resume(ctx context.Context, name string, r wire.IntentRequest) (*wire.Intent, error) {
	return c.intent(ctx, http.MethodPost, name, wire.IntentResume, &r)
}

// Drain asks for planned maintenance or removal (r.Mode): POST
// /v1/hosts/{name}/intents/drain {mode, reason, force}.
func (c *Client) Drain(ctx context.Context, name string, r wire.IntentRequest) (*wire.Intent, error) {
	return c.intent(ctx, http.MethodPost, name, wire.IntentDrain, &r)
}

// Restore withdraws a drain: DELETE /v1/hosts/{name}/intents/drain. A
// removal past its point of no return answers 409.
func (c *Client) Restore(ctx context.Context, name string) error {
	_, err := c.call(ctx, http.MethodDelete, "/v1/hosts/"+seg(name)+"/intents/"+wire.IntentDrain, nil, nil, nil)
	return err
}
