package agent

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
)

// Erase: the erase action on the direct path. Every volume is
// initialized (#Volume.Initialize) and every drive in no volume securely
// erased (#Drive.SecureErase), one after the other in the order the BMC
// lists them, each recorded on the host as an erase task while it runs
// (the fence: a new lease holder follows it, never starts it again, and
// no power changes meanwhile). A holder that adopts the erase of one
// target knows those listed before it were erased by its predecessors.
// A drive or volume the BMC cannot erase fails the host naming it; it is
// never reported clean.

// eraseRun is one host's erase under way in this session.
type eraseRun struct {
	done map[string]string // target URI → "ID: method"
	// resume is the target whose erase this session adopted: those
	// listed before it were erased under an earlier lease.
	resume string
}

type eraseMemo struct {
	mu   sync.Mutex
	runs map[string]*eraseRun
}

func (m *eraseMemo) run(name string) *eraseRun {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.runs == nil {
		m.runs = map[string]*eraseRun{}
	}
	r := m.runs[name]
	if r == nil {
		r = &eraseRun{done: map[string]string{}}
		m.runs[name] = r
	}
	return r
}

func (m *eraseMemo) forget(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.runs, name)
}

// erase is ActionErase. The agent never calls two actions of one host at
// once, so a host's eraseRun is used by one goroutine at a time.
func (s *session) erase(ctx context.Context, h wire.Host, ph provisioner.Host) (provisioner.Result, error) {
	if _, ok := s.a.cfg.Provisioner.(dayTwoSource); !ok {
		// Ironic erases in its own deprovision (automated cleaning).
		return provisioner.Result{Message: fmt.Sprintf("the %s provisioner cleans the disks in its deprovision", s.a.cfg.Provisioner.Name())}, nil
	}
	d, err := s.dayTwo(ctx, ph, "disk erase")
	if err != nil {
		return provisioner.Result{}, err
	}
	rec, ok := s.a.cfg.Client.(taskRecorder)
	if !ok {
		return provisioner.Result{}, fmt.Errorf("%w: this agent's coordinator client cannot record BMC tasks", errclass.ErrUnsupported)
	}
	run := s.erases.run(h.Name)
	if t := s.tasks.current(h.Name, h.Task); t != nil {
		if t.Kind != wire.BMCTaskErase {
			return otherTask(*t), nil
		}
		method, target := jobParts(t.Component)
		if t.Epoch != s.lease.Epoch && t.AdoptedEpoch != s.lease.Epoch && len(run.done) == 0 {
			run.resume = target
		}
		label := short(target) + ": " + method
		res, done, err := s.followTask(ctx, rec, d, h, *t, storageJobJudge(d, *t, "erase of "+label))
		if err != nil || !done {
			return res, err
		}
		run.done[target] = label
	}
	ctrls, err := d.Storage(ctx)
	if err != nil {
		return provisioner.Result{}, err
	}
	targets := eraseTargets(ctrls)
	if len(targets) == 0 {
		return provisioner.Result{}, fmt.Errorf("%w: erase: the BMC lists no drive or volume of this system: nothing can be erased through it (set automatedCleaningMode to disabled to go on without an erase)", errclass.ErrFailed)
	}
	if run.resume != "" {
		for _, tg := range targets {
			if tg.uri == run.resume {
				break
			}
			if _, ok := run.done[tg.uri]; !ok {
				run.done[tg.uri] = tg.label + ": erased under an earlier lease"
			}
		}
		run.resume = ""
	}
	for _, tg := range targets {
		if _, ok := run.done[tg.uri]; ok {
			continue
		}
		op, err := d.Erase(ctx, s.a.cfg.Guard, h.Name, tg.uri)
		if err != nil {
			if st := resourceJob(ctrls, "", tg.uri); st != nil && !st.Ended() {
				// An erase runs that no record names (an agent stopped
				// between the BMC's answer and the record): the BMC
				// refuses another; wait for it to end.
				return provisioner.Result{InProgress: true, Message: fmt.Sprintf("the BMC runs an erase of %s not recorded here (%s); waiting for it to end: %v", tg.label, st, err)}, nil
			}
			return provisioner.Result{}, fmt.Errorf("erase of %s: %w", tg.label, err)
		}
		label := tg.label + ": " + op.Method
		if op.InitializeType != "" {
			label += " (" + op.InitializeType + ")"
		}
		if op.Done && op.Task == "" {
			// Done at once, or going on with no task named: the
			// drive's or volume's state says which.
			if st, err := d.Storage(ctx); err == nil {
				if js := resourceJob(st, op.Method, op.Target); !js.Ended() {
					op.Done = false
				}
			}
		}
		if op.Done && op.Task == "" {
			run.done[tg.uri] = label
			continue
		}
		if err := s.recordStorageJob(ctx, rec, h, wire.BMCTaskErase, op); err != nil {
			return provisioner.Result{}, err
		}
		return provisioner.Result{InProgress: true, Message: "erasing " + label}, nil
	}
	done := make([]string, 0, len(run.done))
	for _, l := range run.done {
		done = append(done, l)
	}
	sort.Strings(done)
	s.erases.forget(h.Name)
	return provisioner.Result{Message: "disks erased: " + strings.Join(done, "; "),
		DayTwo: &wire.DayTwoStatus{LastErase: &wire.EraseStatus{Time: time.Now().UTC(), Disks: done}}}, nil
}

type eraseTarget struct{ uri, label string }

// eraseTargets: every volume, and every drive that belongs to none.
func eraseTargets(ctrls []bmc.StorageController) []eraseTarget {
	var out []eraseTarget
	for _, sc := range ctrls {
		for _, v := range sc.Volumes {
			out = append(out, eraseTarget{v.URI, fmt.Sprintf("volume %s of %s", v.ID, sc.ID)})
		}
		for _, dr := range sc.Drives {
			if len(dr.Volumes) == 0 {
				out = append(out, eraseTarget{dr.URI, fmt.Sprintf("drive %s of %s", dr.ID, sc.ID)})
			}
		}
	}
	return out
}
