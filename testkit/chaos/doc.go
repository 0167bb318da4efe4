// Package chaos is rackfence's Jepsen-style harness: real processes in
// Linux network namespaces on one bridge, faults from a seeded schedule
// (nftables drop rules, SIGSTOP/SIGCONT, SIGKILL and restart), an operator
// workload whose every call is recorded with its invoke and return times,
// and three checkers over what was recorded:
//
//   - fencing (CheckFencing): every mutating call bmcsim audited arrived
//     inside the lease window of its epoch's holder, as the coordinator's
//     lease history records it, and no two windows of a rack overlap;
//   - linearizability (CheckLinear): each host's spec and intents, checked
//     with porcupine; ambiguous results are maybe-applied (return = ∞);
//   - durability and liveness (CheckDurable, CheckLiveness, CheckLogs): no
//     acknowledged write or intent ack lost, every host converges after the
//     final heal within a stated bound, no panic in any log.
//
// Files: net.go (namespaces, bridge, nft), procs.go (every process start and
// every API client: the one file to change for TLS), schedule.go (the seeded
// faults), nemesis.go (applying them), workload.go and history.go (the
// recorded operations), check_*.go (the checkers), run.go (one run),
// campaign.go (totals over runs), stall.go (the agent → BMC stall the lease
// margins cover) and scenario.go (the deterministic replay of the lost
// write the harness found).
// Run needs root, ip (iproute2) and nft (nftables).
package chaos
