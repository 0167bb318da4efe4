package main

import (
	"io"
	"log/slog"
	"runtime/debug"
	"testing"
)

// TestGCTarget: without GOGC in the environment the coordinator collects
// at defaultGOGC; with it, the runtime's value (set from GOGC) stays.
func TestGCTarget(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	old := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(old) })

	if got := setGCTarget(func(string) string { return "" }, log); got != defaultGOGC {
		t.Fatalf("setGCTarget = %d, want %d", got, defaultGOGC)
	}
	if cur := debug.SetGCPercent(-1); cur != defaultGOGC {
		t.Fatalf("GC percent in effect %d, want %d", cur, defaultGOGC)
	}
	debug.SetGCPercent(40) // as the runtime does from GOGC=40
	if got := setGCTarget(func(k string) string {
		if k == "GOGC" {
			return "40"
		}
		return ""
	}, log); got != 40 {
		t.Fatalf("with GOGC=40: setGCTarget = %d", got)
	}
	if cur := debug.SetGCPercent(-1); cur != 40 {
		t.Fatalf("with GOGC=40: GC percent in effect %d", cur)
	}
}
