package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// faultyCoordinator passes every call to a real coordinator's client and
// injects, when a test asks, the faults a real coordinator cannot produce
// at a chosen moment: this agent cut off from every member, renewals
// failing (unreachable) or refused (stale_epoch), a status write refused
// as stale, a watch answer that is a reset leaving hosts out. It is the agent-side fake of Coordinator; it
// fakes nothing else, so every other answer is the real coordinator's. It
// also counts renewals and status writes for the tests' markers.
type faultyCoordinator struct {
	Coordinator
	mu sync.Mutex
	// cut: every call answers errUnreachable.
	cut bool
	// renewFaults are the errors the next renewals answer, in order.
	renewFaults []error
	renewFailed int
	renewOK     int
	// staleWrite: the next status write of this host is refused as stale.
	staleWrite string
	// resetWithout: the next watch answer is a reset without these hosts.
	resetWithout []string
	// oldWatch: status=false is ignored (a coordinator from before it);
	// watches and watchesNoStatus count the watches asked with and
	// without statuses.
	oldWatch        bool
	watches         int
	watchesNoStatus int
	writes          map[string][]wire.StatusReport
	// noRackStatus: the rack status endpoint answers 404 (a coordinator
	// from before it).
	noRackStatus bool
	// rackReports counts rack status requests; touches counts the touches
	// they carried that the coordinator accepted.
	rackReports int
	touches     map[string]int
	// remove: a fault around one host's removal (holdRemoveOf).
	remove *removeFault
	// write: a fault around one host's full write (holdWriteOf).
	write *writeFault
	// noCreated: a rack report naming a createdIndex is refused as an
	// unknown field (a coordinator built before it); createdRefused
	// counts those refusals.
	noCreated      bool
	createdRefused int
	// noHealth: a status carrying hardware health is refused as an
	// unknown field; healthRefused counts those refusals
	// (health_inproc_test.go).
	noHealth      bool
	healthRefused int
	// unnamedTouches and unnamedWrites count the hosts of accepted rack
	// reports that named no createdIndex.
	unnamedTouches, unnamedWrites int
}

func newFaultyCoordinator(c Coordinator) *faultyCoordinator {
	return &faultyCoordinator{Coordinator: c, writes: map[string][]wire.StatusReport{}, touches: map[string]int{}}
}

// errUnreachable is what the client answers when no member does.
var errUnreachable = &client.UnreachableError{URLs: []string{"http://faulty"}, Err: errors.New("injected: connection refused")}

// errStale is the coordinator's refusal of an epoch that is not current.
var errStale = &client.Error{Status: 409, Code: wire.CodeStaleEpoch, Message: "injected: epoch is not current"}

// cutOff makes every call answer errUnreachable (a partition between this
// agent and every member), or ends that.
func (f *faultyCoordinator) cutOff(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cut = on
}

// isCut reports whether the agent is cut off.
func (f *faultyCoordinator) isCut() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cut
}

func (f *faultyCoordinator) AcquireLease(ctx context.Context, rack string, r wire.LeaseRequest) (*wire.Lease, error) {
	if f.isCut() {
		return nil, errUnreachable
	}
	return f.Coordinator.AcquireLease(ctx, rack, r)
}

func (f *faultyCoordinator) ReleaseLease(ctx context.Context, rack string, r wire.LeaseRequest) error {
	if f.isCut() {
		return errUnreachable
	}
	return f.Coordinator.ReleaseLease(ctx, rack, r)
}

func (f *faultyCoordinator) RevealCredentials(ctx context.Context, name string) (*wire.Credentials, error) {
	if f.isCut() {
		return nil, errUnreachable
	}
	return f.Coordinator.RevealCredentials(ctx, name)
}

// failRenewals makes the next renewals answer errs, in order.
func (f *faultyCoordinator) failRenewals(errs ...error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.renewFaults = append(f.renewFaults, errs...)
}

// renewals returns how many renewals failed by injection and how many
// succeeded.
func (f *faultyCoordinator) renewals() (failed, ok int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.renewFailed, f.renewOK
}

func (f *faultyCoordinator) RenewLease(ctx context.Context, rack string, r wire.LeaseRequest) (*wire.Lease, error) {
	f.mu.Lock()
	if f.cut {
		f.renewFailed++
		f.mu.Unlock()
		return nil, errUnreachable
	}
	if len(f.renewFaults) > 0 {
		err := f.renewFaults[0]
		f.renewFaults = f.renewFaults[1:]
		f.renewFailed++
		f.mu.Unlock()
		return nil, err
	}
	f.mu.Unlock()
	l, err := f.Coordinator.RenewLease(ctx, rack, r)
	if err == nil {
		f.mu.Lock()
		f.renewOK++
		f.mu.Unlock()
	}
	return l, err
}

// refuseNextWrite makes the next status write of host answer stale_epoch.
func (f *faultyCoordinator) refuseNextWrite(host string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.staleWrite = host
}

// written returns the status reports of host the coordinator accepted (a
// touch as its host's last status again).
func (f *faultyCoordinator) written(host string) []wire.StatusReport {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]wire.StatusReport(nil), f.writes[host]...)
}

func (f *faultyCoordinator) ReportStatus(ctx context.Context, name string, r wire.StatusReport) error {
	f.mu.Lock()
	if f.cut {
		f.mu.Unlock()
		return errUnreachable
	}
	if f.staleWrite == name {
		f.staleWrite = ""
		f.mu.Unlock()
		return errStale
	}
	if err := f.healthUnknown([]wire.RackHostReport{{Name: name, Status: &r.Status}}); err != nil {
		f.mu.Unlock()
		return err
	}
	f.mu.Unlock()
	err := f.Coordinator.ReportStatus(ctx, name, r)
	if err == nil {
		f.mu.Lock()
		f.writes[name] = append(f.writes[name], r)
		f.mu.Unlock()
	}
	return err
}

// resetWithoutNext makes the next watch answer a reset (as when the agent
// asked from an index older than the coordinator keeps deletions for)
// listing every host of the rack but hosts.
func (f *faultyCoordinator) resetWithoutNext(hosts ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resetWithout = hosts
}

// ignoreStatusParam makes the watch answer whole hosts even when asked
// with status=false, as a coordinator from before the parameter does.
func (f *faultyCoordinator) ignoreStatusParam() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.oldWatch = true
}

// watchCounts are the watches asked so far with and without statuses.
func (f *faultyCoordinator) watchCounts() (with, without int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.watches, f.watchesNoStatus
}

func (f *faultyCoordinator) Watch(ctx context.Context, rack string, index uint64, timeout time.Duration) (*wire.WatchResponse, error) {
	return f.watch(ctx, rack, index, timeout, true)
}

func (f *faultyCoordinator) WatchWithoutStatus(ctx context.Context, rack string, index uint64, timeout time.Duration) (*wire.WatchResponse, error) {
	return f.watch(ctx, rack, index, timeout, false)
}

// watch answers as watchOnce does; while watch answers are held
// (holdRemoveOf), an answer waits for the release and is then asked again
// from the same index, so it carries every change made meanwhile, as the
// answer to a watcher that came back late.
func (f *faultyCoordinator) watch(ctx context.Context, rack string, index uint64, timeout time.Duration, status bool) (*wire.WatchResponse, error) {
	for {
		resp, err := f.watchOnce(ctx, rack, index, timeout, status)
		hold := f.watchHeld()
		if hold == nil {
			return resp, err
		}
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (f *faultyCoordinator) watchOnce(ctx context.Context, rack string, index uint64, timeout time.Duration, status bool) (*wire.WatchResponse, error) {
	f.mu.Lock()
	cut, drop := f.cut, f.resetWithout
	f.resetWithout = nil
	if status {
		f.watches++
	} else {
		f.watchesNoStatus++
	}
	status = status || f.oldWatch
	f.mu.Unlock()
	if cut {
		return nil, errUnreachable
	}
	call := f.Coordinator.Watch
	if !status {
		call = f.Coordinator.WatchWithoutStatus
	}
	if drop == nil {
		return call(ctx, rack, index, timeout)
	}
	// Index 0 answers every host of the rack at once.
	resp, err := call(ctx, rack, 0, timeout)
	if err != nil {
		return nil, err
	}
	out := *resp
	out.Reset, out.Hosts, out.Deleted, out.StatusOmitted = true, nil, nil, nil
	kept := func(n string) bool {
		for _, d := range drop {
			if n == d {
				return false
			}
		}
		return true
	}
	for _, h := range resp.Hosts {
		if kept(h.Name) {
			out.Hosts = append(out.Hosts, h)
		}
	}
	for _, n := range resp.StatusOmitted {
		if kept(n) {
			out.StatusOmitted = append(out.StatusOmitted, n)
		}
	}
	return &out, nil
}

// errNoEndpoint is an older coordinator's answer to a path it lacks.
var errNoEndpoint = &client.Error{Status: 404, Code: wire.CodeNotFound, Message: "injected: no such endpoint"}

// ReportRackStatus passes a rack report on, with the faults of
// ReportStatus: cut off, a host's write refused as stale (the whole
// report, as the coordinator refuses it), no endpoint at all. Accepted
// full writes are recorded as ReportStatus records them.
func (f *faultyCoordinator) ReportRackStatus(ctx context.Context, rack string, r wire.RackStatusReport) (*wire.RackStatusResult, error) {
	f.mu.Lock()
	if f.cut {
		f.mu.Unlock()
		return nil, errUnreachable
	}
	if f.noRackStatus {
		f.mu.Unlock()
		return nil, errNoEndpoint
	}
	if err := f.createdUnknown(r); err != nil {
		f.mu.Unlock()
		return nil, err
	}
	if err := f.healthUnknown(r.Hosts); err != nil {
		f.mu.Unlock()
		return nil, err
	}
	hold := f.writeSent(r)
	if hold != nil {
		f.mu.Unlock()
		if err := waitWrite(ctx, hold); err != nil {
			return nil, err
		}
		f.mu.Lock()
	}
	removal := false
	for _, h := range r.Hosts {
		if f.staleWrite != "" && f.staleWrite == h.Name {
			f.staleWrite = ""
			f.mu.Unlock()
			return nil, errStale
		}
		mine, err := f.removeSent(h)
		if err != nil {
			f.mu.Unlock()
			return nil, err
		}
		removal = removal || mine
	}
	f.rackReports++
	f.mu.Unlock()
	rc, ok := f.Coordinator.(RackStatusAPI)
	if !ok {
		return nil, errNoEndpoint
	}
	res, err := rc.ReportRackStatus(ctx, rack, r)
	if err != nil {
		return nil, err
	}
	if hold != nil {
		f.writeAnswered(r, res)
	}
	if removal {
		if err := f.removeAnswered(ctx); err != nil {
			return nil, err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, h := range r.Hosts {
		switch {
		case h.Created != 0 || res.Hosts[i].Error != nil:
		case h.IsTouch():
			f.unnamedTouches++
		default:
			f.unnamedWrites++
		}
		switch {
		case res.Hosts[i].Error != nil:
		case h.IsTouch():
			// Recorded as the write it stands for: the host's last
			// status again, under this epoch.
			f.touches[h.Name]++
			if w := f.writes[h.Name]; len(w) > 0 {
				rep := wire.StatusReport{Epoch: r.Epoch, Status: w[len(w)-1].Status}
				f.writes[h.Name] = append(w, rep)
			}
		default:
			rep := wire.StatusReport{Epoch: r.Epoch, Acks: h.Acks, Events: h.Events, Remove: h.Remove}
			if h.Status != nil {
				rep.Status = *h.Status
			}
			f.writes[h.Name] = append(f.writes[h.Name], rep)
		}
	}
	return res, nil
}

// rackCounts returns how many rack reports went out and how many touches
// of host the coordinator accepted (written counts them too).
func (f *faultyCoordinator) rackCounts(host string) (reports, touches int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rackReports, f.touches[host]
}

// refuseRackStatus makes the rack status endpoint answer 404, or ends it.
func (f *faultyCoordinator) refuseRackStatus(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.noRackStatus = on
}

// refuseCreated makes a rack report naming a createdIndex answer as a
// coordinator built before that field does (400, unknown field).
func (f *faultyCoordinator) refuseCreated() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.noCreated = true
}

// createdUnknown is called with f.mu held: the refusal of a report naming
// a createdIndex by a coordinator that does not know the field.
func (f *faultyCoordinator) createdUnknown(r wire.RackStatusReport) error {
	if !f.noCreated {
		return nil
	}
	for i, h := range r.Hosts {
		if h.Created != 0 {
			f.createdRefused++
			p := fmt.Sprintf("hosts[%d].created", i)
			return &client.Error{Status: 400, Code: wire.CodeBadRequest, Field: p, Message: fmt.Sprintf("unknown field %q", p)}
		}
	}
	return nil
}

// createdRefusals counts the reports refused for naming a createdIndex.
func (f *faultyCoordinator) createdRefusals() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.createdRefused
}

// unnamedCounts returns how many accepted touches and full writes named
// no createdIndex.
func (f *faultyCoordinator) unnamedCounts() (touches, writes int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.unnamedTouches, f.unnamedWrites
}
