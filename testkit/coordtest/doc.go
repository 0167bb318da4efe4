// Package coordtest runs a real coordinator in-process for tests of its
// clients (the rack agent, rackfencectl, the pivot, shared/client): one
// bootstrapped Raft member (coordinator.Open on a loopback port) with its
// HTTP API (coordinator/api), spoken to through the real shared/client.
// It serves plain HTTP, the --insecure-plaintext configuration: no TLS, so
// agent tokens need no client certificate. A test gets the coordinator's
// real behaviour (lease grants and expiry, epochs checked on status
// writes, the watch, tokens scoped to a rack) in about a second, without
// building or starting a process.
//
// It lives beside the coordinator, as net/http/httptest lives beside
// net/http, so any package that talks to the coordinator can use it.
//
// # Testing
//
// A test starts a coordinator in one of three ways, by what it tests:
//
//   - coordtest.Start, in process, for a test of what the coordinator
//     answers (a client, the agent's logic against real leases and
//     watches): fast, plain HTTP, one member.
//   - coordtest/member.Open, the in-process member coordtest.Start is
//     built on, for the coordinator's and its API's own tests (below).
//   - testkit/rig.StartCoordinator, the real rackfence-coordinator
//     binary, for a test of the process or of what only it does: TLS (the
//     default) or --insecure-plaintext, flags, restarts and signals,
//     multi-member clusters (CoordOpts.Join, CoordOpts.IP), several tiers.
//     It needs make build and RACKFENCE_BIN, and skips under -short.
//     (testkit/chaos starts whole clusters of the binary behind a faulty
//     network for the chaos tool, not for tests.)
//
// The first and the last are built for tests outside the coordinator.
// The coordinator API's own tests (package api) cannot import coordtest,
// which imports them:
// they open members with coordtest/member, the in-process starter
// coordtest itself is built on, and serve their api.Server on it (with
// config tweaks, several members and restarts).
package coordtest
