package main

import (
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
)

// defaultGOGC is the coordinator's garbage collection target when its
// environment sets no GOGC: 75 rather than Go's 100. Its heap is mostly
// the FSM's hosts, which live as long as the process, and Go's default
// lets the heap grow to twice that between collections. Measured at
// 10,000 hosts (docs/performance.md, "Coordinator memory"): the RSS peak
// about 9 % lower, with writes against etcd and the fleet's CPU figures
// within their run-to-run spread. GOGC in the environment (a systemd
// drop-in) still wins; /metrics shows the value in effect as
// go_gc_gogc_percent.
const defaultGOGC = 75

// setGCTarget applies defaultGOGC unless getenv("GOGC") is set (the Go
// runtime applied that one at start). It returns the target in effect.
func setGCTarget(getenv func(string) string, log *slog.Logger) int {
	if v := getenv("GOGC"); v != "" {
		s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
		metrics.Read(s)
		log.Info("garbage collection target from GOGC", "gogc", v)
		return int(s[0].Value.Uint64())
	}
	debug.SetGCPercent(defaultGOGC)
	return defaultGOGC
}
