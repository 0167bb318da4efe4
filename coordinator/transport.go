package coordinator

import "github.com/hashicorp/raft"

// unpipelined is the Raft transport with AppendEntries pipelining turned
// off, so the leader replicates to each follower with one AppendEntries
// call at a time (each bounded by the transport's timeout) instead of
// raft's netPipeline.
//
// The pipeline (hashicorp/raft v1.7.3) can wedge for good when a
// follower refuses an append, as a follower whose disk is full does:
// with raft's default of 2 RPCs in flight both of its channels are
// unbuffered, its decoder exits on the refusal, and the next send parks
// forever on the channel nobody reads. The replication goroutine to that
// follower then never returns while its heartbeats go on, so the
// follower never calls an election either and stays behind until the
// leader restarts. Without the pipeline raft retries the refused append
// with backoff (at most ~10 s apart) and the follower catches up by
// itself once it can write again.
//
// Every other method (heartbeats, votes, pre-votes, snapshots, Close) is
// the NetworkTransport's.
type unpipelined struct{ *raft.NetworkTransport }

// AppendEntriesPipeline tells raft to replicate without a pipeline.
func (unpipelined) AppendEntriesPipeline(raft.ServerID, raft.ServerAddress) (raft.AppendPipeline, error) {
	return nil, raft.ErrPipelineReplicationNotSupported
}
