package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rackfence/rackfence/coordinator/raftprom"
)

// exportRaftMetrics sends hashicorp/raft's and raft-boltdb's own figures
// to reg under Prometheus names (coordinator/raftprom): timings as
// histograms in seconds, state changes as _total counters. They replace
// the millisecond summaries named after raft's keys
// (rackfence_raft_commitTime, …) exported before; docs/operator.md maps
// the old names to the new.
func exportRaftMetrics(reg prometheus.Registerer) error { return raftprom.Export(reg) }
