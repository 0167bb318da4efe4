package main

import (
	"time"

	gometrics "github.com/armon/go-metrics"
	gmprom "github.com/armon/go-metrics/prometheus"
	"github.com/prometheus/client_golang/prometheus"
)

// exportRaftMetrics sends hashicorp/raft's, raft-wal's and raft-boltdb's
// own figures (go-metrics) to reg, so /metrics shows where a write's latency
// goes: rackfence_raft_leader_dispatchLog (the leader's log write and sync,
// whichever log store), rackfence_raft_boltdb_storeLogs (the same inside
// bolt, with --raft-log-store bolt), rackfence_raft_wal_log_appends and
// _log_entries_written (raft-wal counters), rackfence_raft_commitTime,
// rackfence_raft_replication_appendEntries_rpc (follower round trip),
// rackfence_raft_fsm_apply. Summaries are in milliseconds and expire a
// minute after their last sample.
func exportRaftMetrics(reg prometheus.Registerer) error {
	sink, err := gmprom.NewPrometheusSinkFrom(gmprom.PrometheusOpts{Expiration: time.Minute, Registerer: reg, Name: "rackfence_raft_sink"})
	if err != nil {
		return err
	}
	cfg := gometrics.DefaultConfig("rackfence")
	cfg.EnableHostname = false
	cfg.EnableHostnameLabel = false
	cfg.EnableRuntimeMetrics = false // the Go collector already reports these
	_, err = gometrics.NewGlobal(cfg, sink)
	return err
}
