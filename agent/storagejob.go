package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/shared/wire"
)

// Storage jobs (a volume created or deleted, a drive or volume erased) as
// BMC task records: Component is the operation and the URI of the
// resource it acts on; TaskURI the BMC's task, or that resource itself
// when the BMC gave no task (then its state is read instead: a drive's
// Operations, a volume's Status.State).

// jobComponent is a storage job's record Component.
func jobComponent(op *bmc.StorageOp) string { return op.Method + " " + op.Target }

// jobParts splits a storage job's Component into operation and resource.
func jobParts(component string) (method, target string) {
	method, target, _ = strings.Cut(component, " ")
	return method, target
}

// jobTaskURI is what a storage job's record follows: the BMC's task or
// monitor, else the resource acted on.
func jobTaskURI(op *bmc.StorageOp) string {
	switch {
	case op.Task != "":
		return op.Task
	case op.Monitor != "" && !op.Done:
		return op.Monitor
	}
	return op.Target
}

// storageJobJudge follows a storage job recorded on the host: by the
// BMC's task, or (TaskURI the resource) by the resource's state.
func storageJobJudge(d bmc.DayTwo, t wire.BMCTask, what string) taskJudge {
	method, target := jobParts(t.Component)
	j := taskJudge{what: what}
	if t.TaskURI == target && target != "" {
		j.read = func(ctx context.Context) (*bmc.TaskStatus, bool, error) {
			ctrls, err := d.Storage(ctx)
			if err != nil {
				return nil, false, err
			}
			return resourceJob(ctrls, method, target), false, nil
		}
	}
	j.judge = func(_ context.Context, ts *bmc.TaskStatus, gone bool) (string, string, error) {
		switch {
		case gone && t.Kind == wire.BMCTaskRAID:
			// What the job was for is read back next: the volumes.
			return wire.BMCTaskLost, fmt.Sprintf("the BMC no longer knows task %s; the volumes read back decide", t.TaskURI), nil
		case gone:
			return wire.BMCTaskLost, fmt.Sprintf("the BMC no longer knows task %s: %s is not known to be clean: it is erased again at the next try", t.TaskURI, short(target)), nil
		case !ts.Succeeded():
			return wire.BMCTaskFailed, fmt.Sprintf("%s ended %s", t.TaskURI, ts), nil
		}
		return wire.BMCTaskSucceeded, fmt.Sprintf("%s of %s: %s", method, short(target), ts), nil
	}
	j.lostIsDone = t.Kind == wire.BMCTaskRAID
	return j
}

// resourceJob is a job with no BMC task as its resource shows it: running
// while a drive shows an operation (Drive.Operations) or a volume reads
// Updating or Starting; a deleted volume gone is done.
func resourceJob(ctrls []bmc.StorageController, method, uri string) *bmc.TaskStatus {
	running := func(what string) *bmc.TaskStatus {
		return &bmc.TaskStatus{URI: uri, State: "Running", Percent: -1, Messages: []string{what}}
	}
	busyVolume := func(v bmc.Volume) bool { return v.State == "Updating" || v.State == "Starting" }
	for _, sc := range ctrls {
		for _, dr := range sc.Drives {
			if dr.Operation != "" && (dr.URI == uri || sc.URI == uri) {
				return running(short(dr.URI) + ": " + dr.Operation)
			}
		}
		for _, v := range sc.Volumes {
			if busyVolume(v) && (v.URI == uri || sc.URI == uri) {
				return running(short(v.URI) + ": " + v.State)
			}
		}
	}
	done := &bmc.TaskStatus{URI: uri, State: "Completed", Status: "OK", Percent: -1,
		Messages: []string{"the BMC shows no operation on " + short(uri) + " any more (it gave no task to follow)"}}
	return done
}

// short is the last path segment of a Redfish URI.
func short(uri string) string {
	if i := strings.LastIndex(strings.TrimSuffix(uri, "/"), "/"); i >= 0 {
		return uri[i+1:]
	}
	return uri
}
