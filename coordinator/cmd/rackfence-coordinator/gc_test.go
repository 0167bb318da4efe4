package main

import (
	"runtime/debug"
	"testing"
)

func TestTuneGC(t *testing.T) {
	orig := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(orig) })

	p, env := tuneGC(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != defaultGCPercent || p != defaultGCPercent || env {
		t.Fatalf("no GOGC: runtime percent %d, reported %d (from env %v), want %d", got, p, env, defaultGCPercent)
	}
	// GOGC set: the runtime read it at start; tuneGC leaves it alone.
	debug.SetGCPercent(80)
	p, env = tuneGC(func(k string) string {
		if k == "GOGC" {
			return "80"
		}
		return ""
	})
	if got := debug.SetGCPercent(100); got != 80 || p != 80 || !env {
		t.Fatalf("GOGC=80: runtime percent %d, reported %d (from env %v)", got, p, env)
	}
}
