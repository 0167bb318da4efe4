package pivot

import (
	"context"
	"fmt"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// Admit is the destination's check of a PUT carrying a handoff record. It
// confirms with the source tier, over the source's API, that the host is
// detached there and the detach was acknowledged at exactly the claimed
// index, by the claimed cluster. existing is the host already stored here
// (nil if none). On success incoming.Handoff.Confirmed is set; every refusal
// wraps ErrManagedHere, ErrNotConfirmed, ErrSourceUnreachable or
// ErrUnknownTier and becomes a 409 saying why.
func (p *Peers) Admit(ctx context.Context, existing, incoming *wire.Host) error {
	hf := incoming.Handoff
	if hf == nil {
		return nil
	}
	if existing != nil && !handedBackOrSame(existing, hf) {
		return fmt.Errorf("%w: %s exists in tier %s and is not detached towards tier %s; detach or delete it here first",
			ErrManagedHere, incoming.Name, p.self, hf.SourceTier)
	}
	src, err := p.Tier(hf.SourceTier)
	if err != nil {
		return err
	}
	st, err := src.WithStale(false).Status(ctx)
	if err != nil {
		return fmt.Errorf("%w: tier %s: %v; nothing was created here, re-run the pivot", ErrSourceUnreachable, hf.SourceTier, err)
	}
	if st.ClusterID != hf.SourceClusterID {
		return fmt.Errorf("%w: tier %s is cluster %s, the handoff claims cluster %s", ErrNotConfirmed, hf.SourceTier, st.ClusterID, hf.SourceClusterID)
	}
	h, err := src.GetHost(ctx, incoming.Name)
	switch {
	case client.IsNotFound(err):
		return fmt.Errorf("%w: tier %s has no host %s", ErrNotConfirmed, hf.SourceTier, incoming.Name)
	case err != nil:
		return fmt.Errorf("%w: tier %s: %v; nothing was created here, re-run the pivot", ErrSourceUnreachable, hf.SourceTier, err)
	}
	var d *wire.Intent
	if h.Intents != nil {
		d = h.Intents.Detach
	}
	switch {
	case d == nil:
		return fmt.Errorf("%w: %s is not detached in tier %s", ErrNotConfirmed, incoming.Name, hf.SourceTier)
	case d.CreatedIndex != hf.DetachIndex:
		return fmt.Errorf("%w: %s's detach in tier %s is at index %d, the handoff claims %d", ErrNotConfirmed, incoming.Name, hf.SourceTier, d.CreatedIndex, hf.DetachIndex)
	case !d.Acknowledged:
		return fmt.Errorf("%w: %s's detach in tier %s is not acknowledged by its rack agent yet", ErrNotConfirmed, incoming.Name, hf.SourceTier)
	case h.PivotedTo != "" && h.PivotedTo != p.self:
		return fmt.Errorf("%w: %s was pivoted from tier %s to tier %s, not here", ErrNotConfirmed, incoming.Name, hf.SourceTier, h.PivotedTo)
	}
	hf.Confirmed = true
	return nil
}

// handedBackOrSame: a host already here may take a handoff only when it is
// the same handoff again (a re-run) or it was pivoted away to the tier that
// now hands it back.
func handedBackOrSame(existing *wire.Host, hf *wire.Handoff) bool {
	if e := existing.Handoff; e != nil && e.SourceTier == hf.SourceTier && e.DetachIndex == hf.DetachIndex {
		return true
	}
	return existing.PivotedTo != "" && existing.PivotedTo == hf.SourceTier
}
