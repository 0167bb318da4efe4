package main

import (
	"strings"
	"time"

	gometrics "github.com/armon/go-metrics"
	"github.com/prometheus/client_golang/prometheus"
)

// exportRaftMetrics sends hashicorp/raft's and raft-boltdb's own figures
// (go-metrics) to reg under Prometheus names: timings as histograms in
// seconds with a _seconds suffix, state changes as _total counters, each
// with help text (raftsink.go lists them). They replace the millisecond
// summaries named after raft's keys (rackfence_raft_commitTime, …) that
// go-metrics' own Prometheus sink exported before; docs/operator.md maps
// the old names to the new.
func exportRaftMetrics(reg prometheus.Registerer) error {
	sink, err := newRaftSink(reg)
	if err != nil {
		return err
	}
	cfg := gometrics.DefaultConfig("rackfence")
	cfg.EnableHostname = false
	cfg.EnableHostnameLabel = false
	cfg.EnableRuntimeMetrics = false // the Go collector already reports these
	cfg.TimerGranularity = time.Millisecond
	_, err = gometrics.NewGlobal(cfg, sink)
	return err
}

// keyOf joins a go-metrics key without the service name ("rackfence").
func keyOf(key []string) string {
	if len(key) > 0 && key[0] == "rackfence" {
		key = key[1:]
	}
	return strings.Join(key, ".")
}
