package bmc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
)

// Following a flash to its end: the task, then the inventory, which alone
// says whether the flash took.

// FinishUpdate: see DayTwo. It follows the task (WaitTask), then reads
// the item until it answers (the BMC may restart after its own flash),
// both within timeout. Outcomes: the item (done); errclass.ErrFailed (the task
// ended in failure); ErrUpdateNotApplied (Completed, old version still
// there); ErrTaskRunning (timeout: do not power-cycle).
func (c *Conn) FinishUpdate(ctx context.Context, u *Update, timeout time.Duration) (*FirmwareItem, error) {
	if u == nil || u.Component == "" {
		return nil, fmt.Errorf("%w: FinishUpdate needs the Update StartUpdate returned", errclass.ErrFailed)
	}
	deadline := time.Now().Add(timeout)
	what := fmt.Sprintf("firmware update of %s to %s", u.Name, orAny(u.Version))
	taskURI := u.Task
	if taskURI == "" {
		taskURI = u.Monitor
	}
	var st *TaskStatus
	if taskURI != "" {
		var err error
		st, err = c.WaitTask(ctx, taskURI, timeout)
		switch {
		case errors.Is(err, ErrTaskGone):
			// OpenBMC keeps tasks in memory: a BMC flash restarts it and
			// the task goes with it. The inventory tells.
			c.opts.Logger.Info("bmc update task gone, judging the update by the inventory", "bmc", c.addr, "task", taskURI, "err", err.Error())
			st = nil
		case err != nil:
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	var (
		it      FirmwareItem
		read    bool // it holds a read of the item
		lastErr error
	)
	notApplied := func() error {
		if st != nil {
			return fmt.Errorf("%w: %s: %s: flash reported success (task %s %s) but %s still shows version %s (expected %s)",
				ErrUpdateNotApplied, c.addr, what, st.name(), st.State, short(u.Component), it.Version, expected(u))
		}
		how := "the BMC gave no task"
		if taskURI != "" {
			how = "its task " + short(taskURI) + " is gone (404)"
		}
		return fmt.Errorf("%w: %s: %s: %s and %s still shows version %s (expected %s) after %v",
			ErrUpdateNotApplied, c.addr, what, how, short(u.Component), it.Version, expected(u), timeout)
	}
	for {
		if read && !time.Now().Before(deadline) {
			return &it, notApplied()
		}
		cctx, cancel := context.WithDeadline(ctx, deadline)
		err := c.rfCall(cctx, "firmware read", func(ctx context.Context, s *rfSession) error {
			var d rfFirmwareDoc
			if err := rfGet(s.api, u.Component, &d); err != nil {
				return err
			}
			it = d.item(u.Component)
			return nil
		})
		cancel()
		switch {
		case err == nil:
			read = true
			if versionIs(it.Version, u) {
				return &it, nil
			}
			if st != nil { // the task ended: the version will not change now
				return &it, notApplied()
			}
		case !errors.Is(err, errclass.ErrTransient):
			return nil, fmt.Errorf("%s: %w", what, err)
		case ctx.Err() != nil:
			return nil, fmt.Errorf("%w: %s: %s: %v", errclass.ErrTransient, c.addr, what, ctx.Err())
		case !time.Now().Before(deadline):
			if read {
				return &it, notApplied()
			}
			if lastErr == nil {
				lastErr = err
			}
			return nil, fmt.Errorf("%w: %s: %s: %s could not be read in time: %v", ErrTaskRunning, c.addr, what, short(u.Component), lastErr)
		default:
			lastErr = err
		}
		wait := min(c.opts.TaskPollInterval, time.Until(deadline))
		if wait <= 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %s: %s: %v", errclass.ErrTransient, c.addr, what, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// versionIs: v is the version u expects (the one asked for, compared
// whole or as one of its words: iLO shows "U46 v1.80 (10/20/2023)"), or
// without one any other than before.
func versionIs(v string, u *Update) bool {
	if u.Version == "" {
		return v != "" && v != u.FromVersion
	}
	if v == u.Version {
		return true
	}
	return slices.Contains(strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == '(' || r == ')' }), u.Version)
}

func expected(u *Update) string {
	if u.Version == "" {
		return "any other than " + u.FromVersion
	}
	return u.Version
}

func orAny(v string) string {
	if v == "" {
		return "a new version"
	}
	return v
}
