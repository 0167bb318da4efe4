// Package coordtest runs a real coordinator in-process for tests: a Raft
// member (coordinator.Open on a loopback port) with its HTTP API
// (coordinator/api), spoken to through the real shared/client. It serves
// plain HTTP, the --insecure-plaintext configuration: no TLS, so agent
// tokens need no client certificate. A test gets the coordinator's real
// behaviour (lease grants and expiry, epochs checked on status writes,
// the watch, tokens scoped to a rack, the version gate) in about a
// second, without building or starting a process.
//
// Options make the member a new cluster of one (the default), a member
// that joins another (Join), a reopened data dir (Dir: a restart, a
// restored backup), on fixed ports and loopback addresses, with changes
// to the store's and the API's Config; Restart starts it again on its
// data dir and ports.
//
// # Testing
//
// A test starts a coordinator in one of two ways, by what it tests:
//
//   - coordtest.Start, in process, for the coordinator's behaviour as a
//     client sees it (the agent's logic against real leases and watches,
//     the backup and the version gate seen through the API, several
//     members on 127.0.0.x): fast, plain HTTP.
//   - testkit/rig.StartCoordinator, the real rackfence-coordinator
//     binary, for a test of the process or of what only it does: TLS (the
//     default) or --insecure-plaintext, flags, restarts and signals,
//     multi-member clusters (CoordOpts.Join, CoordOpts.IP), several tiers.
//     It needs make build and RACKFENCE_BIN, and skips under -short.
//     (testkit/chaos starts whole clusters of the binary behind a faulty
//     network for the chaos tool, not for tests.)
//
// coordtest.Start is built on coordtest/member, which opens the member
// and serves whatever handler it is given. The coordinator API's own
// tests (package api) cannot import coordtest, which imports them: they
// open members with coordtest/member and serve their api.Server on it.
// Nothing else uses member directly.
package coordtest
