package agent_test

import (
	"os"
	"strconv"
	"time"
)

// envCount is the positive integer in the environment variable name, or
// def when it is unset or not one (the benchmarks' and figure tests'
// size knobs).
func envCount(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// envDuration is the positive duration in name, or def.
func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil && d > 0 {
		return d
	}
	return def
}
