// Package hoststate decides, for one host, what happens next.
//
// It is pure: no network, no exec, no clock reads, no goroutines, no random
// numbers. The caller passes in the host (spec, last status, intents), the
// time, a jitter value and the outcome of the last action; Step returns the
// next status, the single action to run (or none), when to look again, the
// events to record, the intents now acknowledged, whether the host must be
// blocked from mutation, and whether its record may be removed.
//
// Every rule is one row of the table in table.go; docs/hoststate.md is the
// table rendered as a Mermaid diagram plus a list of rules (regenerate with
// go generate ./agent/hoststate). DESIGN.md explains the decisions.
//
// The agent's loop:
//
//	d := hoststate.Step(hoststate.Input{Host: h, Now: now, Jitter: rand.Float64()})
//	for {
//		if d.Blocked { guard.Block(h.Name) } else { guard.Unblock(h.Name) }
//		report(d.Status, d.Acks, d.Events, d.Remove) // one atomic status write
//		if d.Action == hoststate.ActionNone { break } // wait for a change or d.RequeueAfter
//		out := run(d.Action)                          // through the provisioner
//		d = hoststate.Step(hoststate.Input{Host: hostNow, Now: now, Jitter: rand.Float64(), Last: &out})
//	}
//
// Step is idempotent: called again with the status it returned and no
// outcome, it decides the same and records nothing new, so an agent that
// restarts, or is woken by its own status write, never re-runs a finished
// action.
package hoststate
