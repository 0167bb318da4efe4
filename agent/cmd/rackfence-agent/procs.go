package main

import (
	"log/slog"
	"os"
	"runtime"
)

// applyMaxProcs sets GOMAXPROCS to n (--max-procs; 0 leaves Go's default)
// unless the GOMAXPROCS environment variable is set, and returns the value
// in force.
func applyMaxProcs(n int, log *slog.Logger) int {
	if env := os.Getenv("GOMAXPROCS"); env != "" {
		log.Debug("GOMAXPROCS set in the environment; --max-procs not applied", "gomaxprocs", runtime.GOMAXPROCS(0))
		return runtime.GOMAXPROCS(0)
	}
	if n > 0 {
		runtime.GOMAXPROCS(n)
	}
	return runtime.GOMAXPROCS(0)
}
