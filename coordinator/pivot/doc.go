// Package pivot moves hosts between tiers (coordinator clusters of
// different sites) without a redeploy and without a moment of double
// management. The source tier detaches the host and waits for its lease
// holder's acknowledgement; only then does it create the host in the
// destination, carrying its status and a handoff record; the destination
// confirms with the source, over the source's API, that the host is
// detached and acknowledged at that index before any of its agents may touch
// it. See DESIGN.md beside this file.
package pivot
