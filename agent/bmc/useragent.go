package bmc

import (
	"context"
	"fmt"

	"github.com/rackfence/rackfence/shared/fence"
)

type epochKey struct{}

// WithEpoch returns ctx carrying the lease epoch a call is made under.
// Guard.Do puts the epoch of the lease it checked into the context it hands
// to the guarded function, so the User-Agent of a mutating call names
// exactly the epoch that was verified.
func WithEpoch(ctx context.Context, epoch uint64) context.Context {
	return context.WithValue(ctx, epochKey{}, epoch)
}

// EpochFromContext returns the epoch put there by WithEpoch (or Guard.Do).
func EpochFromContext(ctx context.Context) (uint64, bool) {
	e, ok := ctx.Value(epochKey{}).(uint64)
	return e, ok
}

// AgentUserAgent returns an Options.UserAgent function producing the
// CONTRACT.md header `rackfence-agent/VERSION (AGENT-ID; rack=R; epoch=E)`.
// E is the epoch the guard verified for a mutating call, otherwise the
// lease holder's current epoch (0 without a lease); lease may be nil.
func AgentUserAgent(version, agentID, rack string, lease *fence.Holder) func(context.Context) string {
	return func(ctx context.Context) string {
		e, ok := EpochFromContext(ctx)
		if !ok && lease != nil {
			e = lease.Current().Epoch
		}
		return fmt.Sprintf("rackfence-agent/%s (%s; rack=%s; epoch=%d)", version, agentID, rack, e)
	}
}
