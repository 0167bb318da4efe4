package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// The BMC task record, one shape for every kind (a firmware flash, a RAID
// job, an erase): the lease holder records a long BMC task as soon as the
// BMC named it (recordTask), a holder follows the recorded task one read
// per call (followTask: adopting it first when it was recorded under an
// earlier epoch), judges it once it ended and ends the record. A task is
// never started again while its record stands, and the state machine
// changes no power meanwhile.

// taskJudge is what followTask needs to know of one kind of task.
type taskJudge struct {
	// what names the work in messages ("firmware update of bmc").
	what string
	// timeout bounds how long it may run (0: no bound); past it the
	// record and the power hold stay and the host fails naming it.
	timeout time.Duration
	// read reads the task once (nil: the BMC's task at the record's
	// TaskURI). gone: the BMC no longer knows it.
	read func(ctx context.Context) (ts *bmc.TaskStatus, gone bool, err error)
	// judge decides how an ended (or forgotten) task went.
	judge func(ctx context.Context, ts *bmc.TaskStatus, gone bool) (outcome, msg string, err error)
	// lostIsDone: a task the BMC forgot (outcome lost) fails nothing:
	// what it was for is read back next (RAID: the volumes).
	lostIsDone bool
}

// recordTask records a task the BMC just started (the BMC's task
// monitor, or the resource it runs on when it gave none) and holds it in
// the session's memo, so it is followed even before the watch brings the
// record back.
func (s *session) recordTask(ctx context.Context, rec taskRecorder, h wire.Host, r wire.BMCTaskRequest) (*wire.BMCTask, error) {
	r.Epoch, r.CreatedIndex = s.lease.Epoch, h.CreatedIndex
	t, err := rec.StartTask(ctx, h.Name, r)
	if err != nil {
		return nil, taskRecordErr("record the "+r.Kind+" task "+r.TaskURI+" the BMC started", err)
	}
	s.tasks.hold(h.Name, *t)
	return t, nil
}

// followTask adopts the recorded task when it was recorded under another
// epoch, reads it once and, once it ended, ends its record with j's
// judgement. done: the record is ended and the task succeeded.
func (s *session) followTask(ctx context.Context, rec taskRecorder, d bmc.DayTwo, h wire.Host, t wire.BMCTask, j taskJudge) (provisioner.Result, bool, error) {
	epoch := s.lease.Epoch
	if t.Epoch != epoch && t.AdoptedEpoch != epoch {
		got, err := rec.StartTask(ctx, h.Name, wire.BMCTaskRequest{Epoch: epoch, CreatedIndex: h.CreatedIndex,
			Kind: t.Kind, TaskURI: t.TaskURI, Component: t.Component})
		if err != nil {
			return provisioner.Result{}, false, taskRecordErr("adopt the "+t.Kind+" task "+t.TaskURI, err)
		}
		t = *got
		s.log.Info("adopted the BMC task recorded under an earlier epoch; following it, never starting another",
			"host", h.Name, "kind", t.Kind, "component", t.Component, "task", t.TaskURI, "startedEpoch", t.Epoch)
	}
	s.tasks.hold(h.Name, t)
	read := j.read
	if read == nil {
		read = func(ctx context.Context) (*bmc.TaskStatus, bool, error) {
			ts, err := d.Task(ctx, t.TaskURI)
			if errors.Is(err, bmc.ErrTaskGone) {
				return nil, true, nil
			}
			return ts, false, err
		}
	}
	ts, gone, err := read(ctx)
	switch {
	case err != nil:
		return provisioner.Result{}, false, err
	case !gone && !ts.Ended():
		if j.timeout > 0 && time.Since(t.StartedAt) > j.timeout {
			return provisioner.Result{}, false, fmt.Errorf("%w: %s (%s) still runs after its timeout %s: the record and the power hold stay; check the BMC, never power-cycle the host while it runs",
				errclass.ErrFailed, j.what, t.TaskURI, j.timeout)
		}
		return provisioner.Result{InProgress: true, Message: fmt.Sprintf("%s: %s", j.what, ts)}, false, nil
	}
	outcome, msg, err := j.judge(ctx, ts, gone)
	if err != nil {
		return provisioner.Result{}, false, err
	}
	if _, err := rec.EndTask(ctx, h.Name, wire.BMCTaskEnd{Epoch: epoch, TaskURI: t.TaskURI, Outcome: outcome, Message: msg}); err != nil && !client.IsNotFound(err) {
		return provisioner.Result{}, false, taskRecordErr("end the "+t.Kind+" task "+t.TaskURI, err)
	}
	s.tasks.end(h.Name, t.TaskURI)
	s.log.Info("BMC task ended", "host", h.Name, "kind", t.Kind, "component", t.Component, "task", t.TaskURI, "outcome", outcome, "msg", msg)
	if outcome != wire.BMCTaskSucceeded && (outcome != wire.BMCTaskLost || !j.lostIsDone) {
		return provisioner.Result{}, false, fmt.Errorf("%w: %s: %s", errclass.ErrFailed, j.what, msg)
	}
	return provisioner.Result{}, true, nil
}

// otherTask is the answer of an action that finds a task of another kind
// recorded: it waits for that task's own action to end it.
func otherTask(t wire.BMCTask) provisioner.Result {
	return provisioner.Result{InProgress: true, Message: fmt.Sprintf("a %s task (%s) is recorded on the host: waiting for it to end", t.Kind, t.TaskURI)}
}

// taskRecordErr classifies a refused task record: a stale epoch fences
// this agent; anything else is retried.
func taskRecordErr(what string, err error) error {
	if client.IsStaleEpoch(err) {
		return fmt.Errorf("%w: %s: %v", guard.ErrFenced, what, err)
	}
	if client.IsNotFound(err) {
		return fmt.Errorf("%w: %s: %v", errclass.ErrFailed, what, err)
	}
	return fmt.Errorf("%w: %s: %v", errclass.ErrTransient, what, err)
}
