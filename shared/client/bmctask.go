package client

import (
	"context"
	"net/http"

	"github.com/rackfence/rackfence/shared/wire"
)

// StartTask records a long BMC task the agent started on a host, or adopts
// one recorded under an earlier epoch (same kind, component and task URI):
// POST /v1/hosts/{name}/task. A stale epoch answers 409 stale_epoch,
// another task already recorded 409 bmc_task_running
// (errors.Is(err, wire.ErrBMCTaskRunning)).
func (c *Client) StartTask(ctx context.Context, name string, r wire.BMCTaskRequest) (*wire.BMCTask, error) {
	var out wire.BMCTask
	if _, err := c.call(ctx, http.MethodPost, "/v1/hosts/"+seg(name)+"/task", nil, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// EndTask ends a host's BMC task record with the task's outcome: DELETE
// /v1/hosts/{name}/task. No record answers 404 (wire.ErrNotFound): an
// earlier end landed.
func (c *Client) EndTask(ctx context.Context, name string, r wire.BMCTaskEnd) (*wire.Host, error) {
	var out wire.Host
	if _, err := c.call(ctx, http.MethodDelete, "/v1/hosts/"+seg(name)+"/task", nil, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
