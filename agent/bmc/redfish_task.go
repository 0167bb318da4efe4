package bmc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
)

// BMC tasks (DMTF Task, DSP0266 "Asynchronous operations"): a long
// operation answers 202 with Location = its task monitor (and on some BMCs
// the Task in the body); the monitor answers 202 while the task runs and
// 200/201 (or the operation's own answer) once it ended; the Task resource
// (TaskService/Tasks/ID) answers 200 with TaskState, PercentComplete and
// Messages throughout.

// TaskStatus is one read of a task.
type TaskStatus struct {
	URI     string // the Task resource ("" when the BMC showed none)
	Monitor string // its task monitor ("" when unknown)
	ID      string
	Name    string
	// State is the TaskState: New, Starting, Running, Suspended,
	// Interrupted, Pending, Stopping, Cancelling, Completed, Killed,
	// Exception, Cancelled.
	State   string
	Status  string // TaskStatus: OK, Warning, Critical
	Percent int    // PercentComplete, -1 when not given
	// Messages are the task's messages, "MessageId: Message".
	Messages []string
	Start    string
	End      string
}

// Ended: the task will not change any more.
func (t *TaskStatus) Ended() bool {
	switch t.State {
	case "Completed", "Killed", "Exception", "Cancelled":
		return true
	}
	return false
}

// Succeeded: it ended Completed and not Critical.
func (t *TaskStatus) Succeeded() bool { return t.State == "Completed" && t.Status != "Critical" }

func (t *TaskStatus) String() string {
	s := t.State
	if t.Percent >= 0 && !t.Ended() {
		s += fmt.Sprintf(" at %d%%", t.Percent)
	}
	if len(t.Messages) > 0 {
		s += " (" + t.Messages[len(t.Messages)-1] + ")"
	}
	return s
}

func (t *TaskStatus) name() string {
	switch {
	case t.ID != "":
		return t.ID
	case t.URI != "":
		return short(t.URI)
	}
	return short(t.Monitor)
}

type rfTaskDoc struct {
	ODataID         string `json:"@odata.id"`
	ODataType       string `json:"@odata.type"`
	ID              string `json:"Id"`
	Name            string
	TaskState       string
	TaskStatus      string
	PercentComplete *int
	TaskMonitor     string
	StartTime       string
	EndTime         string
	Messages        []rfMessage
}

// status is the TaskStatus of a Task document read at uri.
func (d *rfTaskDoc) status(uri string) *TaskStatus {
	st := &TaskStatus{URI: d.ODataID, Monitor: d.TaskMonitor, ID: d.ID, Name: d.Name, State: d.TaskState,
		Status: d.TaskStatus, Percent: -1, Start: d.StartTime, End: d.EndTime}
	if d.PercentComplete != nil {
		st.Percent = *d.PercentComplete
	}
	if st.URI == "" && !isMonitor(uri, d) {
		st.URI = uri
	}
	if st.Monitor == "" && isMonitor(uri, d) {
		st.Monitor = uri
	}
	for _, m := range d.Messages {
		if t := m.text(); t != "" {
			st.Messages = append(st.Messages, t)
		}
	}
	return st
}

// isMonitor: uri is not the Task resource itself.
func isMonitor(uri string, d *rfTaskDoc) bool {
	return d.ODataID != "" && strings.TrimRight(d.ODataID, "/") != strings.TrimRight(uri, "/")
}

// Task reads a task or a task monitor once (read-only: no guard).
func (c *Conn) Task(ctx context.Context, uri string) (*TaskStatus, error) {
	if c.proto != "redfish" {
		return nil, fmt.Errorf("%w: BMC tasks need a Redfish BMC; %s is %s", errclass.ErrUnsupported, c.addr, c.proto)
	}
	if !strings.HasPrefix(uri, "/") {
		return nil, fmt.Errorf("%w: task URI %q is not a path on the BMC (/redfish/v1/…)", errclass.ErrFailed, uri)
	}
	var out *TaskStatus
	err := c.rfCall(ctx, "task read", func(ctx context.Context, s *rfSession) error {
		var err error
		out, err = c.readTask(s, uri)
		return err
	})
	return out, err
}

// readTask GETs a task or a monitor. c.mu held.
func (c *Conn) readTask(s *rfSession, uri string) (*TaskStatus, error) {
	resp, err := s.api.Get(uri)
	if err != nil {
		if status, msg, ok := bmcRefusal(err); ok && status == http.StatusNotFound {
			if msg == "" {
				msg = "no message"
			}
			return nil, fmt.Errorf("%w: %s: the BMC knows no task at %s (404: %s): it may have ended and been dropped, or the BMC rebooted and lost it; check the outcome itself (inventory, volumes)", ErrTaskGone, c.addr, short(uri), msg)
		}
		return nil, c.refused(err, "read of task "+short(uri))
	}
	code := resp.StatusCode
	_, body := readAnswer(resp)
	var d rfTaskDoc
	if jsonRaw(body, &d) && d.TaskState != "" {
		return d.status(uri), nil
	}
	// A monitor answering without a Task: 202 runs, anything else ended
	// (the operation's own answer).
	st := &TaskStatus{Monitor: uri, Percent: -1, State: "Completed"}
	if code == http.StatusAccepted {
		st.State = "Running"
	}
	return st, nil
}

// WaitTask: see DayTwo. It polls every Options.TaskPollInterval; a BMC
// that cannot be reached or answers 5xx meanwhile (it reboots itself
// during a flash) is waited through until timeout. An ended task that did
// not succeed is errclass.ErrFailed with the task's messages; timeout passed is
// ErrTaskRunning with the last state seen.
func (c *Conn) WaitTask(ctx context.Context, uri string, timeout time.Duration) (*TaskStatus, error) {
	if timeout <= 0 {
		return nil, fmt.Errorf("%w: WaitTask needs a timeout > 0 (got %v)", errclass.ErrFailed, timeout)
	}
	deadline := time.Now().Add(timeout)
	var (
		last    *TaskStatus
		lastErr error
	)
	for {
		cctx, cancel := context.WithDeadline(ctx, deadline)
		st, err := c.Task(cctx, uri)
		cancel()
		switch {
		case err == nil:
			last, lastErr = st, nil
			if st.Ended() {
				if !st.Succeeded() {
					return st, fmt.Errorf("%w: %s: task %s ended %s: %s", errclass.ErrFailed, c.addr, st.name(), st.State, strings.Join(st.Messages, "; "))
				}
				return st, nil
			}
		case ctx.Err() != nil:
			return last, err
		case errors.Is(err, errclass.ErrTransient):
			lastErr = err
			c.opts.Logger.Debug("bmc task read failed, waiting on", "bmc", c.addr, "task", uri, "err", err.Error())
		default:
			return last, err
		}
		wait := c.opts.TaskPollInterval
		if left := time.Until(deadline); left <= 0 {
			return last, c.stillRunning(uri, timeout, last, lastErr)
		} else if left < wait {
			wait = left
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return last, fmt.Errorf("%w: %s: waiting for task %s: %v", errclass.ErrTransient, c.addr, short(uri), ctx.Err())
		case <-t.C:
		}
	}
}

// stillRunning is ErrTaskRunning for a task not ended after timeout.
func (c *Conn) stillRunning(uri string, timeout time.Duration, last *TaskStatus, lastErr error) error {
	what := "never read"
	if last != nil {
		what = "last read " + last.String()
	}
	if lastErr != nil {
		what += "; the last read failed: " + lastErr.Error()
	}
	return fmt.Errorf("%w: %s: task %s has not ended after %v (%s): it may still be writing: do not power-cycle the host; read it again later",
		ErrTaskRunning, c.addr, short(uri), timeout, what)
}
