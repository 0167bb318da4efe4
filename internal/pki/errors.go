package pki

import "errors"

var (
	// ErrPinMismatch: the server's chain holds no CA certificate whose
	// SHA-256 equals the pin the token or --ca-fingerprint carries.
	ErrPinMismatch = errors.New("the server's CA does not match the pinned fingerprint")
	// ErrNotMember: a peer presented a certificate of this cluster that is
	// not a member's (an agent's, say) where only members may speak (Raft).
	ErrNotMember = errors.New("the peer's certificate is not a cluster member's")
	// ErrNoIdentity: a certificate carries no rackfence identity URI.
	ErrNoIdentity = errors.New("the certificate names no rackfence identity")
)
