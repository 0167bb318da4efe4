// Package fsm is the coordinator's replicated state machine: the commands
// and their log entry codec, the state every member holds, Apply,
// snapshots, reads and watches. Apply is deterministic: it reads no clock,
// draws no random numbers and does no I/O (the leader stamps times into
// commands), and the package does not import hashicorp/raft: the
// coordinator package adapts it to raft.FSM (coordinator/raftfsm.go).
// purity_test.go keeps it so. See DESIGN.md.
package fsm
