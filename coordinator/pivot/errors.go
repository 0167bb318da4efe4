package pivot

import "errors"

var (
	// ErrUnknownTier: the tier is not configured with --peer-tier.
	ErrUnknownTier = errors.New("unknown tier")
	// ErrNotConfirmed: the source does not confirm the handoff (forged or
	// stale): the destination refuses the host (409).
	ErrNotConfirmed = errors.New("handoff not confirmed by the source tier")
	// ErrManagedHere: the host already exists in the destination under
	// management (409).
	ErrManagedHere = errors.New("host already exists here under management")
	// ErrSourceUnreachable: the source tier did not answer (409 as well:
	// nothing is created; re-run the pivot).
	ErrSourceUnreachable = errors.New("source tier unreachable")
)
