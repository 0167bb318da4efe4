// Package pki is rackfence's small certificate authority and the TLS
// plumbing around it: one CA per tier, made at bootstrap; member
// certificates (server and client use, Raft and API) and agent certificates
// (client use, naming the agent's rack); fingerprints that tokens carry to
// pin the CA; a holder that serves the current certificate to crypto/tls and
// renews it before expiry without a restart.
//
// Identities live in a URI SAN, so they survive any host name:
//
//	rackfence://member/<node-id>
//	rackfence://agent/<rack>/<agent-id>
//
// See DESIGN.md beside this file for the decisions.
package pki
