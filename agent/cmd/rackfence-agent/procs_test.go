package main

import (
	"log/slog"
	"runtime"
	"testing"
)

// TestApplyMaxProcs: --max-procs sets GOMAXPROCS, 0 leaves Go's default,
// and a GOMAXPROCS environment variable wins over the flag.
func TestApplyMaxProcs(t *testing.T) {
	was := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(was) })
	log := slog.New(slog.DiscardHandler)

	t.Setenv("GOMAXPROCS", "")
	runtime.GOMAXPROCS(3)
	if got := applyMaxProcs(1, log); got != 1 || runtime.GOMAXPROCS(0) != 1 {
		t.Errorf("--max-procs 1: GOMAXPROCS %d (returned %d), want 1", runtime.GOMAXPROCS(0), got)
	}
	runtime.GOMAXPROCS(3)
	if got := applyMaxProcs(0, log); got != 3 {
		t.Errorf("--max-procs 0: GOMAXPROCS %d, want it left at 3", got)
	}
	t.Setenv("GOMAXPROCS", "3")
	if got := applyMaxProcs(1, log); got != 3 {
		t.Errorf("GOMAXPROCS=3 in the environment and --max-procs 1: GOMAXPROCS %d, want 3 (the environment wins)", got)
	}
}
