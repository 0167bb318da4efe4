package ctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// defaultInterval is how often --wait, --follow and --watch poll.
const defaultInterval = time.Second

// goal is what --wait waits for. The rules, also in --help and
// docs/operator.md:
//
//	detach             the detach intent is acknowledged by the lease holder
//	attach             no detach intent, operational status ok (or discovered)
//	drain maintenance  the drain intent is acknowledged by the lease holder
//	drain removal      the host record is gone
//	restore            no drain intent, operational status ok (or discovered)
//	host delete        the host record is gone
//
// A host fails when, after the request, the agent reports it in error with
// errorCount >= 1 (the error is the outcome; fix it and resume), or when it
// disappears while the goal needs it. Errors are shown as they appear.
type goal int

const (
	goalDetached goal = iota
	goalAttached
	goalMaintenance
	goalRemoved
	goalRestored
	goalDeleted
	// Issue 21 (reboot.go): the operation intents.
	goalRebooted
	goalHeldOff
	goalReleased
	goalInspected
	// service.go: the service intent.
	goalServiced
)

func (g goal) String() string {
	return [...]string{"detach", "attach", "drain (maintenance)", "drain (removal)", "restore", "delete",
		"reboot", "power-off hold", "power-off release", "inspect", "service"}[g]
}

// doneWord is what a finished host shows.
func (g goal) doneWord() string {
	return [...]string{"detached", "attached", "in maintenance", "removed", "restored", "deleted",
		"rebooted", "held off", "released", "inspected", "serviced"}[g]
}

const waitRules = `--wait blocks until every host is done, shows progress (a live table on a
terminal, one line per change otherwise) and ends with the outcome. Done
means: detach and drain maintenance - the rack's lease holder acknowledged
the intent; attach and restore - the intent is gone and the host's status is
ok; drain removal and delete - the host record is gone. A host fails when
the agent reports it in error (errorCount >= 1) after the request, or when
it disappears while it should stay. Exit 0 when all are done; 1 when one
failed or --timeout passed (the intents stay in place).`

// hostProgress is what the wait knows of one host.
type hostProgress struct {
	name    string
	before  *wire.Host // at the start (nil when unknown)
	now     *wire.Host // last seen (nil = gone)
	done    bool
	failed  string // why it failed
	lastErr string // last error seen, kept after it clears
	line    string // last printed summary (non-terminal)
	// requester is the power-off holder a hold or release waits on.
	requester string
}

// judge updates p from the last fetch.
func (p *hostProgress) judge(g goal) {
	if p.done || p.failed != "" {
		return
	}
	h := p.now
	if h == nil {
		if g == goalRemoved || g == goalDeleted {
			p.done = true
		} else {
			p.failed = "the host was deleted"
		}
		return
	}
	s := h.Status
	if s != nil && s.ErrorType != "" {
		p.lastErr = fmt.Sprintf("%s (count %d): %s", s.ErrorType, s.ErrorCount, s.ErrorMessage)
	}
	fresh := s != nil && (p.before == nil || p.before.Status == nil || !s.LastUpdated.Equal(p.before.Status.LastUpdated))
	in := h.Intents
	if in == nil {
		in = &wire.Intents{}
	}
	switch g {
	case goalDetached:
		p.done = in.Detach != nil && in.Detach.Acknowledged
		if in.Detach == nil {
			p.failed = "the detach intent was withdrawn (attached by someone else)"
		}
	case goalMaintenance:
		p.done = in.Drain != nil && in.Drain.Acknowledged
		if in.Drain == nil {
			p.failed = "the drain intent was withdrawn (restored by someone else)"
		}
	case goalAttached:
		p.done = in.Detach == nil && s != nil && restful(s.OperationalStatus)
	case goalRestored:
		p.done = in.Drain == nil && s != nil && restful(s.OperationalStatus)
	default:
		p.judgeOperation(g, h, in)
	}
	if !p.done && p.failed == "" && fresh && s.OperationalStatus == wire.OpError && s.ErrorCount >= 1 {
		p.failed = p.lastErr
	}
}

// detachable: the states where the agent honours a detach at once.
func detachable(state string) bool {
	return state == wire.StateProvisioned || state == wire.StateExternallyProvisioned || state == wire.StateAvailable
}

func restful(op string) bool { return op == wire.OpOK || op == wire.OpDiscovered }

func (p *hostProgress) summary(g goal) string {
	switch {
	case p.done:
		return g.doneWord()
	case p.failed != "":
		return "FAILED: " + p.failed
	case p.now == nil:
		return "not seen yet"
	}
	h := p.now
	s := hostState(h)
	if op := hostOpStatus(h); op != "" {
		s += "/" + op
	}
	if in, _ := hostIntents(h); in != "" {
		s += " intents " + in
	}
	if e := hostError(h); e != "" {
		s += " error " + e
	}
	if d := h.Intents; g == goalDetached && d != nil && d.Detach != nil && !d.Detach.Force && !d.Detach.Acknowledged && h.Status != nil && !detachable(h.Status.ProvisioningState) {
		s += " (a detach waits for provisioned, externally-provisioned or available; detach with --force to skip that)"
	}
	if d := h.Intents; (g == goalMaintenance || g == goalRemoved) && h.Consumer != "" && d != nil && d.Drain != nil && !d.Drain.Force && !d.Drain.Acknowledged {
		s += fmt.Sprintf(" (waits for consumer %q to be cleared, or drain with --force)", h.Consumer)
	}
	return s
}

// wait blocks until every host of before reaches g, or fails, or
// --timeout passes. rack, when set, fetches the hosts with one list call.
func (x *Ctx) wait(cl *client.Client, g goal, before map[string]*wire.Host, rack string) error {
	ctx := x.ctx
	if x.g.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, x.g.timeout)
		defer cancel()
	}
	var ps []*hostProgress
	for n, h := range before {
		ps = append(ps, &hostProgress{name: n, before: h, requester: x.waitRequester})
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].name < ps[j].name })

	w := x.io.Stdout
	if x.structured() {
		w = x.io.Stderr
	}
	live := x.io.IsTerminal(w)
	width := 0
	if live {
		width = x.io.Width(w)
	}
	start := time.Now()
	drawn := 0
	var fetchErr string
	for {
		err := fetchProgress(ctx, cl, ps, rack)
		switch {
		case err == nil:
			fetchErr = ""
		case ctx.Err() != nil:
		case client.IsUnreachable(err) || client.IsNoLeader(err):
			if msg := err.Error(); msg != fetchErr && !live {
				fmt.Fprintf(w, "[%4.0fs] coordinator: %s (still waiting)\n", time.Since(start).Seconds(), msg)
			}
			fetchErr = err.Error()
		default:
			return err
		}
		nDone, nFailed := 0, 0
		for _, p := range ps {
			if err == nil {
				p.judge(g)
			}
			if p.done {
				nDone++
			}
			if p.failed != "" {
				nFailed++
			}
		}
		elapsed := time.Since(start)
		if live {
			drawn = drawProgress(w, g, ps, drawn, elapsed, x.g.timeout, width, fetchErr)
		} else {
			for _, p := range ps {
				if s := p.summary(g); s != p.line {
					p.line = s
					fmt.Fprintf(w, "[%4.0fs] %s: %s\n", elapsed.Seconds(), p.name, s)
				}
			}
		}
		if nDone+nFailed == len(ps) {
			return x.waitOutcome(g, ps, elapsed)
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) && x.ctx.Err() == nil {
				return timeoutError(g, ps, x.g.timeout)
			}
			return &failure{code: ExitFailed, err: fmt.Errorf("interrupted while waiting for %s", g), hints: []string{"the intents stay in place; check with 'rackfencectl host list'"}}
		case <-time.After(defaultInterval):
		}
	}
}

// fetchProgress reads every unfinished host.
func fetchProgress(ctx context.Context, cl *client.Client, ps []*hostProgress, rack string) error {
	if rack != "" {
		l, err := cl.ListHosts(ctx, client.HostFilter{Rack: rack})
		if err != nil {
			return err
		}
		seen := map[string]*wire.Host{}
		for i := range l.Items {
			seen[l.Items[i].Name] = &l.Items[i]
		}
		for _, p := range ps {
			p.now = seen[p.name]
		}
		return nil
	}
	for _, p := range ps {
		if p.done || p.failed != "" {
			continue
		}
		h, err := cl.GetHost(ctx, p.name)
		switch {
		case client.IsNotFound(err):
			p.now = nil
		case err != nil:
			return err
		default:
			p.now = h
		}
	}
	return nil
}

// drawProgress redraws the live block over the previous one (drawn lines)
// and returns how many lines it wrote.
func drawProgress(w io.Writer, g goal, ps []*hostProgress, drawn int, elapsed, timeout time.Duration, width int, fetchErr string) int {
	var b strings.Builder
	if drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA\x1b[J", drawn)
	}
	nDone, nFailed := 0, 0
	for _, p := range ps {
		if p.done {
			nDone++
		}
		if p.failed != "" {
			nFailed++
		}
	}
	head := fmt.Sprintf("%s: %d/%d done, %d failed, %s elapsed", g, nDone, len(ps), nFailed, elapsed.Truncate(time.Second))
	if timeout > 0 {
		head += fmt.Sprintf(" (timeout %s)", timeout)
	}
	lines := []string{head}
	if fetchErr != "" {
		lines = append(lines, "coordinator: "+fetchErr+" (still waiting)")
	}
	t := &table{header: []string{"HOST", "STATE", "STATUS", "PROGRESS", "LAST ERROR"}}
	shown, hidden := 0, 0
	for _, p := range ps {
		if p.done && len(ps) > 20 {
			hidden++
			continue
		}
		if shown >= 20 {
			hidden++
			continue
		}
		shown++
		state, op := "gone", ""
		if p.now != nil {
			state, op = hostState(p.now), hostOpStatus(p.now)
		}
		prog := "waiting"
		switch {
		case p.done:
			prog = g.doneWord()
		case p.failed != "":
			prog = "FAILED"
		}
		t.add(p.name, state, op, prog, p.lastErr)
	}
	var tb strings.Builder
	t.write(&tb, width)
	lines = append(lines, strings.Split(strings.TrimRight(tb.String(), "\n"), "\n")...)
	if hidden > 0 {
		lines = append(lines, fmt.Sprintf("... and %d more", hidden))
	}
	for _, l := range lines {
		if width > 0 {
			l = cut(l, width-1)
		}
		b.WriteString(l + "\n")
	}
	fmt.Fprint(w, b.String())
	return len(lines)
}

func (x *Ctx) waitOutcome(g goal, ps []*hostProgress, elapsed time.Duration) error {
	var failed []string
	for _, p := range ps {
		if p.failed != "" {
			failed = append(failed, p.name+": "+p.failed)
		}
	}
	w := x.io.Stdout
	if x.structured() {
		w = x.io.Stderr
	}
	if len(failed) == 0 {
		fmt.Fprintf(w, "%s done: %d host(s) %s in %s\n", g, len(ps), g.doneWord(), elapsed.Truncate(100*time.Millisecond))
		return x.printFinal(ps)
	}
	_ = x.printFinal(ps)
	hint := "fix the cause (BMC reachable? credentials right?), then 'rackfencectl resume NAME' retries at once"
	return &failure{code: ExitFailed, err: fmt.Errorf("%s failed for %d of %d host(s):\n  %s", g, len(failed), len(ps), strings.Join(failed, "\n  ")), hints: []string{hint}}
}

// printFinal prints the hosts' last form for -o json|yaml.
func (x *Ctx) printFinal(ps []*hostProgress) error {
	if !x.structured() {
		return nil
	}
	var hs []wire.Host
	for _, p := range ps {
		if p.now != nil {
			hs = append(hs, *p.now)
		}
	}
	if len(ps) == 1 && len(hs) == 1 {
		return x.print(hs[0], nil)
	}
	return x.print(wire.List[wire.Host]{Items: hs}, nil)
}

func timeoutError(g goal, ps []*hostProgress, timeout time.Duration) error {
	var left []string
	for _, p := range ps {
		if p.done {
			continue
		}
		s := p.name + ": " + p.summary(g)
		if p.failed == "" && p.lastErr != "" {
			s += "; last error " + p.lastErr
		}
		left = append(left, s)
	}
	return &failure{code: ExitFailed,
		err:   fmt.Errorf("timed out after %s waiting for %s; %d of %d host(s) not done:\n  %s", timeout, g, len(left), len(ps), strings.Join(left, "\n  ")),
		hints: timeoutHints(g, ps)}
}

// timeoutHints say what holds the hosts that are not done, from what their
// lines say: a consumer a drain waits for, a state a detach waits for, an
// error the agent keeps retrying, or (only then) an agent that does not act.
func timeoutHints(g goal, ps []*hostProgress) []string {
	var consumers, states, errs, idle []string
	for _, p := range ps {
		if p.done {
			continue
		}
		h := p.now
		var in *wire.Intents
		if h != nil {
			in = h.Intents
		}
		switch {
		case h != nil && (g == goalMaintenance || g == goalRemoved) && h.Consumer != "" && in != nil && in.Drain != nil && !in.Drain.Force && !in.Drain.Acknowledged:
			consumers = append(consumers, fmt.Sprintf("%s (consumer %q)", p.name, h.Consumer))
		case h != nil && g == goalDetached && in != nil && in.Detach != nil && !in.Detach.Force && !in.Detach.Acknowledged && h.Status != nil && !detachable(h.Status.ProvisioningState):
			states = append(states, p.name)
		case p.failed != "" || p.lastErr != "":
			errs = append(errs, p.name)
		default:
			idle = append(idle, p.name)
		}
	}
	var hints []string
	if len(consumers) > 0 {
		hints = append(hints, fmt.Sprintf("a drain waits until the host's consumer is cleared: %s; have the consumer release it (clear consumer with 'host apply'), or drain with --force to skip the wait", strings.Join(consumers, ", ")))
	}
	if len(states) > 0 {
		hints = append(hints, fmt.Sprintf("a detach waits for provisioned, externally-provisioned or available: %s; wait for the current operation, or detach with --force", strings.Join(states, ", ")))
	}
	if len(errs) > 0 {
		hints = append(hints, fmt.Sprintf("the rack agent keeps retrying after an error: %s; fix the cause the error names, then 'rackfencectl resume NAME' retries at once", strings.Join(errs, ", ")))
	}
	if len(idle) > 0 {
		hints = append(hints, "the intents stay in place and the rack agent keeps working; is the rack's agent running ('rackfencectl rack list' shows its lease holder)? Wait longer with --timeout")
	}
	return hints
}
