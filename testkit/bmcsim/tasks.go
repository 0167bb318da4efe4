package bmcsim

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Tasks (DMTF Task v1_4, TaskService v1_1, DSP0266 "Asynchronous
// operations"): a long operation answers 202 Accepted with Location = its
// task monitor; the monitor answers 202 with the Task while it is New or
// Running and 200 with the Task once it ended (201 + Location of the new
// resource for a completed create); DELETE on the monitor kills the task.
// Progress is computed from the clock when read (no goroutine per task):
// a task of D simulated minutes started at T is done at T + D/Speed.

// Task kinds (TaskState.Kind).
const (
	TaskUpdate       = "update"
	TaskErase        = "erase"
	TaskInitialize   = "initialize"
	TaskVolumeCreate = "volume-create"
	TaskVolumeDelete = "volume-delete"
)

// TaskState is one task as /sim/state shows it.
type TaskState struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Target  string `json:"target"`            // the resource acted on
	Version string `json:"version,omitempty"` // update: the image's version
	State   string `json:"state"`             // New, Running, Completed, Exception, Killed
	Percent int    `json:"percent"`
	// Start is when the task started running ("" while New), End when it
	// ended ("" while it runs): RFC 3339 with nanoseconds, real time, so a
	// test can compare them with AuditLine.Time.
	Start    string   `json:"start,omitempty"`
	End      string   `json:"end,omitempty"`
	Messages []string `json:"messages,omitempty"` // MessageIds
}

type task struct {
	id, kind, name  string
	target, version string
	state, health   string
	outcome         string
	percent         int
	created         time.Time
	started, ended  time.Time
	dur             time.Duration
	messages        []doc
	// waitSys >= 0: the task stays New until system waitSys powers on
	// (@Redfish.OperationApplyTime OnReset).
	waitSys int
	// finish applies a successful task's effect. b.mu held.
	finish func(now time.Time)
	// result is the resource a completed create made (the monitor then
	// answers 201 with it as Location).
	result string
}

func (t *task) running() bool { return t.state == "New" || t.state == "Running" }

// newTask registers a task. b.mu held. It starts at once unless waitSys
// >= 0.
func (s *Sim) newTask(b *bmc, kind, name, target string, minutes float64, waitSys int, now time.Time) *task {
	b.nextTask++
	t := &task{id: b.prof.taskPrefix + strconv.Itoa(b.nextTask), kind: kind, name: name, target: target,
		state: "New", health: "OK", outcome: OutcomeSuccess, created: now, waitSys: waitSys,
		dur: simDur(minutes, b.knobs.Speed)}
	if kind == TaskUpdate {
		t.outcome = b.knobs.UpdateOutcome
	}
	b.tasks = append(b.tasks, t)
	if waitSys < 0 {
		s.startTask(b, t, now)
	}
	return t
}

// startTask moves t to Running. b.mu held.
func (s *Sim) startTask(b *bmc, t *task, now time.Time) {
	t.state, t.started = "Running", now
	t.messages = append(t.messages, taskMessage("TaskEvent.1.0.TaskStarted", "The task with Id '"+t.id+"' has started.", "OK", t.id))
	if t.kind == TaskUpdate && b.knobs.RebootMinutes > 0 {
		d := simDur(b.knobs.RebootMinutes, b.knobs.Speed)
		time.AfterFunc(t.dur/2, func() { s.rebootBMC(b, t, d) })
	}
}

// advance brings every task up to now. b.mu held.
func (b *bmc) advance(now time.Time) {
	for _, t := range b.tasks {
		if t.state != "Running" {
			continue
		}
		p := 100
		if t.dur > 0 {
			p = int(now.Sub(t.started) * 100 / t.dur)
		}
		if t.outcome == OutcomeHang {
			t.percent = min(p, HangPercent)
			continue
		}
		if p < 100 {
			t.percent = p
			continue
		}
		b.endTask(t, t.started.Add(t.dur))
	}
}

// endTask completes t at when, by its outcome. b.mu held.
func (b *bmc) endTask(t *task, when time.Time) {
	t.ended, t.percent = when, 100
	switch t.outcome {
	case OutcomeFail:
		t.state, t.health = "Exception", "Critical"
		t.messages = append(t.messages, taskMessage("Update.1.0.ApplyFailed",
			"Installation of '"+t.version+"' to '"+t.target+"' failed.", "Critical", t.version, t.target))
		return
	case OutcomeNoChange:
	default:
		if t.finish != nil {
			t.finish(when)
		}
	}
	t.state = "Completed"
	t.messages = append(t.messages, taskMessage("TaskEvent.1.0.TaskCompletedOK", "The task with Id '"+t.id+"' has completed.", "OK", t.id))
}

// abortTask ends t in Exception with msg (a Base/Update message). b.mu held.
func (b *bmc) abortTask(t *task, now time.Time, id, msg string) {
	t.state, t.health, t.ended = "Exception", "Critical", now
	t.messages = append(t.messages, taskMessage(id, msg, "Critical"))
}

// runningUpdate is the update task running now, if any. b.mu held.
func (b *bmc) runningUpdate() *task {
	for _, t := range b.tasks {
		if t.kind == TaskUpdate && t.running() {
			return t
		}
	}
	return nil
}

// startWaiting starts the tasks waiting for system j's power-on. b.mu held.
func (s *Sim) startWaiting(b *bmc, j int, now time.Time) {
	for _, t := range b.tasks {
		if t.state == "New" && t.waitSys == j {
			s.startTask(b, t, now)
		}
	}
}

func taskMessage(id, msg, severity string, args ...string) doc {
	m := doc{"MessageId": id, "Message": msg, "Severity": severity, "MessageSeverity": severity}
	if len(args) > 0 {
		m["MessageArgs"] = args
	}
	return m
}

func (b *bmc) taskPath(t *task) string    { return b.prof.tasks + "/" + t.id }
func (b *bmc) monitorPath(t *task) string { return b.prof.taskService + "/TaskMonitors/" + t.id }

// taskDoc is t as a Task resource. b.mu held.
func (b *bmc) taskDoc(t *task) doc {
	msgs := make([]doc, len(t.messages))
	copy(msgs, t.messages)
	d := doc{"@odata.id": b.taskPath(t), "@odata.type": "#Task.v1_4_3.Task", "Id": t.id, "Name": t.name,
		"TaskState": t.state, "TaskStatus": t.health, "PercentComplete": t.percent,
		"StartTime": rfc3339(t.created), "TaskMonitor": b.monitorPath(t), "Messages": msgs,
		"Payload": doc{"TargetUri": t.target}}
	if !t.ended.IsZero() {
		d["EndTime"] = rfc3339(t.ended)
	}
	return d
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// findTask returns the task with id. b.mu held.
func (b *bmc) findTask(id string) *task {
	for _, t := range b.tasks {
		if t.id == id {
			return t
		}
	}
	return nil
}

// serveTask answers GET of a task or a task monitor, and DELETE of a
// monitor; false when pth is neither.
func (s *Sim) serveTask(w http.ResponseWriter, r *http.Request, b *bmc, pth string) bool {
	p := b.prof
	if p.tasks == "" {
		return false
	}
	id, isTask := strings.CutPrefix(pth, p.tasks+"/")
	mid, isMon := strings.CutPrefix(pth, p.taskService+"/TaskMonitors/")
	if !isTask && !isMon {
		return false
	}
	if isMon {
		id = mid
	}
	now := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(now)
	t := b.findTask(id)
	if t == nil || strings.Contains(id, "/") {
		writeError(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", "no task at "+pth)
		return true
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodDelete:
		if !isMon {
			writeError(w, http.StatusMethodNotAllowed, "Base.1.0.OperationNotAllowed", "DELETE the task monitor "+b.monitorPath(t)+" to cancel a task")
			return true
		}
		if t.running() {
			if t.kind == TaskVolumeCreate {
				b.vols = slicesDeleteVolume(b.vols, t.result)
			}
			t.state, t.health, t.ended = "Killed", "Warning", now
			t.messages = append(t.messages, taskMessage("TaskEvent.1.0.TaskCancelled", "The task with Id '"+t.id+"' has been cancelled.", "Warning", t.id))
			b.mutations++
		}
		w.WriteHeader(http.StatusNoContent)
		return true
	default:
		writeError(w, http.StatusMethodNotAllowed, "Base.1.0.OperationNotAllowed", r.Method+" is not allowed on "+pth)
		return true
	}
	if isTask {
		w.Header().Set("Allow", "GET, HEAD")
		writeJSON(w, http.StatusOK, b.taskDoc(t), "")
		return true
	}
	w.Header().Set("Allow", "GET, HEAD, DELETE")
	switch {
	case t.running():
		w.Header().Set("Location", b.monitorPath(t))
		writeJSON(w, http.StatusAccepted, b.taskDoc(t), "")
	case t.state == "Completed" && t.result != "":
		w.Header().Set("Location", t.result)
		writeJSON(w, http.StatusCreated, b.taskDoc(t), "")
	default:
		writeJSON(w, http.StatusOK, b.taskDoc(t), "")
	}
	return true
}

// accepted answers 202 for a task just started: Location = its monitor;
// the body is the Task where the profile sends it (bmcweb), else empty
// (iLO, iDRAC). b.mu held.
func (b *bmc) accepted(w http.ResponseWriter, t *task) {
	w.Header().Set("Location", b.monitorPath(t))
	noteTask(w, t.id)
	if b.prof.taskInAccepted {
		writeJSON(w, http.StatusAccepted, b.taskDoc(t), "")
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// taskStates is /sim/state's view. b.mu held.
func (b *bmc) taskStates() []TaskState {
	out := make([]TaskState, 0, len(b.tasks))
	for _, t := range b.tasks {
		ts := TaskState{ID: t.id, Kind: t.kind, Target: t.target, Version: t.version, State: t.state, Percent: t.percent,
			Start: stamp(t.started), End: stamp(t.ended)}
		for _, m := range t.messages {
			ts.Messages = append(ts.Messages, m["MessageId"].(string))
		}
		out = append(out, ts)
	}
	return out
}

// taskMembers is the task collection's Members. b.mu held.
func (b *bmc) taskMembers() []doc {
	out := make([]doc, 0, len(b.tasks))
	for _, t := range b.tasks {
		out = append(out, doc{"@odata.id": b.taskPath(t)})
	}
	return out
}

func slicesDeleteVolume(vols []*volume, pth string) []*volume {
	out := vols[:0]
	for _, v := range vols {
		if v.path != pth {
			out = append(out, v)
		}
	}
	return out
}
