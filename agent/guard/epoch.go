package guard

import "context"

type epochKey struct{}

// WithEpoch returns ctx carrying the lease epoch a call is made under.
// Guard.Do puts the epoch of the lease it checked into the context it hands
// to the guarded function, so the User-Agent of a mutating call (agent/bmc's
// AgentUserAgent) names exactly the epoch that was verified.
func WithEpoch(ctx context.Context, epoch uint64) context.Context {
	return context.WithValue(ctx, epochKey{}, epoch)
}

// EpochFromContext returns the epoch put there by WithEpoch (or Guard.Do).
func EpochFromContext(ctx context.Context) (uint64, bool) {
	e, ok := ctx.Value(epochKey{}).(uint64)
	return e, ok
}
