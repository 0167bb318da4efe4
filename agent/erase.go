package agent

import (
	"context"
	"errors"
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
// erased (#Drive.SecureErase), all started in one call and followed by
// later calls (InProgress while any runs). A drive or volume the BMC
// cannot erase fails the host naming it; it is never reported clean.

// eraseRun is one host's erase under way in this session.
type eraseRun struct {
	running map[string]eraseJob // target URI → job started
	done    map[string]string   // target URI → "ID: method"
}

type eraseJob struct{ label, task string }

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
		r = &eraseRun{running: map[string]eraseJob{}, done: map[string]string{}}
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
	run := s.erases.run(h.Name)
	var busy []string
	for target, job := range run.running {
		if job.task == "" {
			continue
		}
		ts, err := d.Task(ctx, job.task)
		switch {
		case errors.Is(err, bmc.ErrTaskGone):
			delete(run.running, target) // the BMC forgot it: erase again
			continue
		case err != nil:
			return provisioner.Result{}, err
		case !ts.Ended():
			busy = append(busy, fmt.Sprintf("%s %s", job.label, ts))
			continue
		case !ts.Succeeded():
			delete(run.running, target)
			return provisioner.Result{}, fmt.Errorf("%w: erase of %s ended %s: the disk is not known to be clean", errclass.ErrFailed, job.label, ts)
		}
		run.done[target] = job.label
		delete(run.running, target)
	}
	ctrls, err := d.Storage(ctx)
	if err != nil {
		return provisioner.Result{}, err
	}
	targets := eraseTargets(ctrls)
	if len(targets) == 0 {
		return provisioner.Result{}, fmt.Errorf("%w: erase: the BMC lists no drive or volume of this system: nothing can be erased through it (set automatedCleaningMode to disabled to go on without an erase)", errclass.ErrFailed)
	}
	for _, tg := range targets {
		if _, ok := run.done[tg.uri]; ok {
			continue
		}
		if _, ok := run.running[tg.uri]; ok {
			continue
		}
		op, err := d.Erase(ctx, s.a.cfg.Guard, h.Name, tg.uri)
		if err != nil {
			return provisioner.Result{}, fmt.Errorf("erase of %s: %w", tg.label, err)
		}
		label := tg.label + ": " + op.Method
		if op.InitializeType != "" {
			label += " (" + op.InitializeType + ")"
		}
		task := op.Task
		if task == "" {
			task = op.Monitor
		}
		if op.Done || task == "" {
			run.done[tg.uri] = label
			continue
		}
		run.running[tg.uri] = eraseJob{label: label, task: task}
		busy = append(busy, label+" started")
		s.log.Info("erase started", "host", h.Name, "target", tg.uri, "method", op.Method, "task", task)
	}
	if len(busy) > 0 || len(run.running) > 0 {
		sort.Strings(busy)
		return provisioner.Result{InProgress: true, Message: "erasing: " + strings.Join(busy, "; ")}, nil
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
