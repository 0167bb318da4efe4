package bmc

import (
	"context"
	"fmt"

	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/shared/fence"
)

// AgentUserAgent returns an Options.UserAgent function producing the
// header `rackfence-agent/VERSION (AGENT-ID; rack=R; epoch=E)`.
// E is the epoch the guard verified for a mutating call, otherwise the
// lease holder's current epoch (0 without a lease); lease may be nil.
func AgentUserAgent(version, agentID, rack string, lease *fence.Holder) func(context.Context) string {
	return func(ctx context.Context) string {
		e, ok := guard.EpochFromContext(ctx)
		if !ok && lease != nil {
			e = lease.Current().Epoch
		}
		return fmt.Sprintf("rackfence-agent/%s (%s; rack=%s; epoch=%d)", version, agentID, rack, e)
	}
}
