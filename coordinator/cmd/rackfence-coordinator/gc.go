package main

import "runtime/debug"

// defaultGCPercent is the coordinator's GOGC unless the environment sets
// GOGC. Its heap is mostly the state it holds (hosts with their hardware
// details), live for the whole run; Go's default of 100 lets the heap grow
// to twice that between collections. Measured at 10,000 hosts
// (docs/performance.md, "Coordinator memory"): 50 took RSS from 13.7 to
// 11.2 KiB per host with no change in coordinator CPU beyond the noise
// (garbage collection was about 8 % of it).
const defaultGCPercent = 50

// tuneGC sets the GC percent to defaultGCPercent unless GOGC is set, and
// returns the percent in effect (-1: off) and whether GOGC set it.
// GOMEMLIMIT, when set, applies on top as Go documents.
func tuneGC(getenv func(string) string) (percent int, fromEnv bool) {
	if getenv("GOGC") != "" {
		p := debug.SetGCPercent(100) // read the runtime's value…
		debug.SetGCPercent(p)        // …and put it back
		return p, true
	}
	debug.SetGCPercent(defaultGCPercent)
	return defaultGCPercent, false
}
