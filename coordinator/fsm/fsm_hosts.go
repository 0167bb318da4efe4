package fsm

import (
	"reflect"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// PutHostResult answers a PutHostCmd.
type PutHostResult struct {
	Host    wire.Host
	Created bool
}

// DeleteHostResult answers a DeleteHostCmd: Deleted when the record is
// gone, otherwise deletion was requested from the rack's agent.
type DeleteHostResult struct {
	Host    wire.Host
	Deleted bool
}

func specOf(h *wire.Host) wire.Host {
	return wire.Host{
		Name: h.Name, Rack: h.Rack, BMC: h.BMC, BootMACAddress: h.BootMACAddress,
		Online: h.Online, ExternallyProvisioned: h.ExternallyProvisioned,
		Image: h.Image, Consumer: h.Consumer, Handoff: h.Handoff, Labels: h.Labels,
		RootDeviceHints: h.RootDeviceHints, BootMode: h.BootMode, BootMethod: h.BootMethod, AutomatedCleaningMode: h.AutomatedCleaningMode,
		UserData: h.UserData, NetworkData: h.NetworkData, MetaData: h.MetaData,
		PreprovisioningNetworkData: h.PreprovisioningNetworkData,
		BIOS:                       h.BIOS, Firmware: h.Firmware, RAID: h.RAID, UpdatePolicy: h.UpdatePolicy,
	}
}

// cloneLabels copies labels with interned strings (a fleet repeats the same
// few keys and values); empty labels are stored as nil, so {} and no labels
// are the same spec.
func cloneLabels(l map[string]string) map[string]string {
	if len(l) == 0 {
		return nil
	}
	out := make(map[string]string, len(l))
	for k, v := range l {
		out[in(k)] = in(v)
	}
	return out
}

// labelsOnly reports whether a and b differ in nothing but their labels.
func labelsOnly(a, b wire.Host) bool {
	a.Labels, b.Labels = nil, nil
	return reflect.DeepEqual(a, b)
}

// storeHost stores a new record for a host and marks its rack changed.
func (f *FSM) storeHost(t *tx, h *hostRec) {
	f.putHost(t, h)
	t.touch(h.Rack)
}

// storeStatus stores a new record for a host that differs from the old one
// in its status (and events) only: its rack's watchers are woken, but not
// a status-less watch (watch_index.go).
func (f *FSM) storeStatus(t *tx, h *hostRec) {
	f.putHost(t, h)
	t.touchStatus(h.Rack)
}

// putHost stores h at the entry's index and moves its rack's Index.
func (f *FSM) putHost(t *tx, h *hostRec) {
	h.ModifiedIndex = t.index
	e := entryOf(h)
	f.fleet.swap(f.s.Hosts[h.Name], e)
	f.s.Hosts[h.Name] = e
	r := f.s.rack(h.Rack)
	r.Hosts[h.Name] = e
	r.Index = t.index
}

// removeHost deletes a host record and leaves a tombstone for watchers.
func (f *FSM) removeHost(t *tx, h *hostRec) {
	f.fleet.swap(f.s.Hosts[h.Name], nil)
	delete(f.s.Hosts, h.Name)
	delete(f.s.Creds, BMCAccountRecord(h.Name)) // its BMC account's record goes with it
	r := f.s.rack(h.Rack)
	delete(r.Hosts, h.Name)
	r.Tombs = append(r.Tombs, tombstone{Name: h.Name, Index: t.index})
	if n := len(r.Tombs) - MaxTombstones; n > 0 {
		r.TombFloor = r.Tombs[n-1].Index
		r.Tombs = append([]tombstone(nil), r.Tombs[n:]...)
	}
	r.Index = t.index
	t.touch(h.Rack)
}

func (f *FSM) applyPutHost(t *tx, c PutHostCmd) (any, error) {
	spec := specOf(&c.Host)
	spec.Image, spec.RootDeviceHints, spec.Handoff = cloneImage(spec.Image), cloneHints(spec.RootDeviceHints), cloneHandoff(spec.Handoff)
	spec.UserData, spec.NetworkData = cloneRef(spec.UserData), cloneRef(spec.NetworkData)
	spec.MetaData, spec.PreprovisioningNetworkData = cloneRef(spec.MetaData), cloneRef(spec.PreprovisioningNetworkData)
	internSpec(&spec)
	old := f.s.Hosts[spec.Name].rec()
	handoff := spec.Handoff != nil && spec.Handoff.Confirmed
	if old == nil {
		rec := &hostRec{Host: spec}
		rec.CreatedIndex, rec.SpecIndex = t.index, t.index
		if handoff && c.Host.Status != nil {
			rec.Status = carriedStatus(c.Host.Status, spec.BootMACAddress, c.Time)
		}
		f.storeHost(t, rec)
		return PutHostResult{Host: rec.Host, Created: true}, nil
	}
	if old.Rack != spec.Rack {
		return nil, &Error{Code: wire.CodeConflict, Field: "rack",
			Message: "host " + spec.Name + " is in rack " + old.Rack + "; a host cannot move to rack " + spec.Rack + ": delete it and create it again"}
	}
	if handoff && old.PivotedTo != "" && old.PivotedTo == spec.Handoff.SourceTier {
		// Handed back (admission confirmed it): re-attach here.
		rec := *old
		rec.Host = spec
		rec.Status, rec.CreatedIndex, rec.DeletionRequested = old.Status, old.CreatedIndex, old.DeletionRequested
		rec.Task = old.Task
		rec.Intents = cloneIntents(old.Intents)
		rec.Intents.Detach = nil
		rec.Intents = normIntents(rec.Intents)
		rec.SpecIndex = t.index
		f.storeHost(t, &rec)
		return PutHostResult{Host: rec.Host}, nil
	}
	oldSpec := specOf(&old.Host)
	if reflect.DeepEqual(oldSpec, spec) {
		return PutHostResult{Host: old.Host}, nil
	}
	rec := *old
	pivoted := rec.PivotedTo
	rec.Host = spec
	rec.PivotedTo = pivoted
	rec.Status, rec.Intents, rec.Task = old.Status, old.Intents, old.Task
	rec.CreatedIndex, rec.DeletionRequested = old.CreatedIndex, old.DeletionRequested
	// Labels are the operator's metadata, not something the agent acts on
	// (like a Kubernetes generation): a change of labels alone keeps the
	// spec index, so it does not lift a host's error backoff.
	rec.SpecIndex = old.SpecIndex
	if !labelsOnly(oldSpec, spec) {
		rec.SpecIndex = t.index
	}
	f.storeHost(t, &rec)
	return PutHostResult{Host: rec.Host}, nil
}

func (f *FSM) applyDeleteHost(t *tx, c DeleteHostCmd) (any, error) {
	old := f.s.Hosts[c.Name].rec()
	if old == nil {
		return nil, notFound("host %s does not exist", c.Name)
	}
	var forced *wire.Event
	if c.TaskFence && !old.DeletionRequested {
		ev, err := taskFence(old, opDelete, wire.Intent{Force: c.Force})
		if err != nil {
			return nil, err
		}
		forced = ev
	}
	if old.Status == nil {
		f.removeHost(t, old)
		return DeleteHostResult{Host: old.Host, Deleted: true}, nil
	}
	if old.DeletionRequested {
		return DeleteHostResult{Host: old.Host}, nil
	}
	rec := *old
	rec.DeletionRequested = true
	if forced != nil {
		rec.Events = appendEvents(old.Events, []wire.Event{*forced}, t.index, c.Time)
	}
	f.storeHost(t, &rec)
	return DeleteHostResult{Host: rec.Host}, nil
}

// carriedStatus is the status a confirmed handoff brings from the source
// tier (hardware details, power, provisioning state, and when its last
// operations ran), so this tier does not inspect again and the host's
// history survives the move.
func carriedStatus(src *wire.HostStatus, bootMAC string, at time.Time) *wire.HostStatus {
	st := internStatus(wire.HostStatus{ProvisioningState: src.ProvisioningState, PoweredOn: src.PoweredOn,
		PowerState: src.PowerState, HardwareDetails: src.HardwareDetails, OperationHistory: src.OperationHistory}, bootMAC)
	st.LastUpdated = at
	return &st
}

func (f *FSM) applySetPivoted(t *tx, c SetPivotedCmd) (any, error) {
	old := f.s.Hosts[c.Name].rec()
	if old == nil {
		return nil, notFound("host %s does not exist", c.Name)
	}
	if c.DeleteSource {
		return f.applyDeleteHost(t, DeleteHostCmd{Name: c.Name})
	}
	if old.PivotedTo == c.To {
		return old.Host, nil
	}
	rec := *old
	rec.PivotedTo = c.To
	f.storeHost(t, &rec)
	return rec.Host, nil
}

func intentSlot(in *wire.Intents, kind string) **wire.Intent {
	switch kind {
	case wire.IntentDetach:
		return &in.Detach
	case wire.IntentDrain:
		return &in.Drain
	case wire.IntentResume:
		return &in.Resume
	}
	return nil
}

func cloneIntents(in *wire.Intents) *wire.Intents {
	if in == nil {
		return &wire.Intents{}
	}
	c := *in
	return &c
}

func normIntents(in *wire.Intents) *wire.Intents {
	if in == nil || (in.Detach == nil && in.Drain == nil && in.Resume == nil &&
		in.Reboot == nil && in.Inspect == nil && in.Service == nil && len(in.PowerOff) == 0 && in.RotateCredentials == nil) {
		return nil
	}
	return in
}

func (f *FSM) applyPutIntent(t *tx, c PutIntentCmd) (any, error) {
	old := f.s.Hosts[c.Name].rec()
	if old == nil {
		return nil, notFound("host %s does not exist", c.Name)
	}
	rec := *old
	rec.Intents = cloneIntents(old.Intents)
	slot := intentSlot(rec.Intents, c.Kind)
	if slot == nil {
		return nil, &Error{Code: wire.CodeBadRequest, Field: "kind", Message: "unknown intent kind " + c.Kind}
	}
	forced, err := taskFence(old, c.Kind, c.Intent)
	if err != nil {
		return nil, err
	}
	in := c.Intent
	in.CreatedIndex, in.Acknowledged, in.AckEpoch = t.index, false, 0
	*slot = &in
	if forced != nil {
		rec.Events = appendEvents(old.Events, []wire.Event{*forced}, t.index, c.Time)
	}
	f.storeHost(t, &rec)
	return in, nil
}

func (f *FSM) applyDeleteIntent(t *tx, c DeleteIntentCmd) (any, error) {
	old := f.s.Hosts[c.Name].rec()
	if old == nil {
		return nil, notFound("host %s does not exist", c.Name)
	}
	if c.Kind == wire.IntentDrain && old.Intents != nil && old.Intents.Drain != nil &&
		old.Status != nil && old.Status.Extra[wire.ExtraRemovalCommitted] == "true" {
		return nil, conflict("the removal of host %s is past its point of no return (its node is already gone from the provisioner); it cannot be restored, only deleted", c.Name)
	}
	if intentSlot(&wire.Intents{}, c.Kind) == nil {
		return nil, &Error{Code: wire.CodeBadRequest, Field: "kind", Message: "unknown intent kind " + c.Kind}
	}
	if old.Intents == nil || *intentSlot(old.Intents, c.Kind) == nil {
		return old.Host, nil
	}
	rec := *old
	rec.Intents = cloneIntents(old.Intents)
	*intentSlot(rec.Intents, c.Kind) = nil
	rec.Intents = normIntents(rec.Intents)
	f.storeHost(t, &rec)
	return rec.Host, nil
}

// applyStatus applies a CmdStatus entry as the host report it carries: a
// per-host write is a rack report's host that names no createdIndex.
// (Decode keeps StatusCmd, whose body is the log's and the per-host
// endpoint's format; it takes the one shape here.)
func (f *FSM) applyStatus(t *tx, c StatusCmd) (any, error) {
	h := wire.RackHostReport{Name: c.Name, Status: &c.Report.Status, Acks: c.Report.Acks,
		Events: c.Report.Events, Remove: c.Report.Remove}
	return f.applyHost(t, c.Rack, c.Report.Epoch, c.Time, &h)
}

// applyHost applies one host's report by rack's agent under epoch, the
// one write of an agent's view of a host: alone (CmdStatus, as
// StatusCmd.host) or as one host of a rack report (applyRackStatus).
// A report about another host of the same name (sameHost), a host that
// does not exist or is in another rack, and a stale epoch are refused in
// that order; then the host is touched, removed or written in full. The
// answer is the host (a touch: as it stays) or DeleteHostResult.
func (f *FSM) applyHost(t *tx, rack string, epoch uint64, at time.Time, h *wire.RackHostReport) (any, error) {
	e := f.s.Hosts[h.Name]
	if err := sameHost(e, h); err != nil {
		return nil, err
	}
	if err := ownHost(e, rack, h.Name); err != nil {
		return nil, err
	}
	if err := f.checkEpoch(rack, epoch); err != nil {
		return nil, err
	}
	if h.IsTouch() {
		return f.applyTouch(t, e, epoch, at, h)
	}
	old := e.rec()
	switch {
	case h.Remove:
		f.removeHost(t, old)
		return DeleteHostResult{Host: old.Host, Deleted: true}, nil
	}
	rec := *old
	var st wire.HostStatus
	if h.Status != nil {
		st = *h.Status
	}
	st = internStatus(st, old.BootMACAddress)
	st.LastUpdated, st.Epoch = at, epoch
	rec.Status = &st
	if len(h.Acks) > 0 && old.Intents != nil {
		rec.Intents = cloneOpIntents(old.Intents)
		for _, a := range h.Acks {
			if ackOperation(rec.Intents, a, epoch) {
				continue
			}
			slot := intentSlot(rec.Intents, a.Kind)
			if slot == nil || *slot == nil || (*slot).CreatedIndex != a.CreatedIndex {
				continue
			}
			if a.Drop {
				*slot = nil
				continue
			}
			in := **slot
			in.Acknowledged, in.AckEpoch = true, epoch
			*slot = &in
		}
		rec.Intents = normIntents(rec.Intents)
	}
	if len(h.Events) > 0 {
		rec.Events = appendEvents(old.Events, h.Events, t.index, at)
	}
	if len(h.Acks) > 0 {
		// An ack, even one that matched nothing, is answered to a
		// status-less watch: the agent sees its acks land.
		f.storeHost(t, &rec)
	} else {
		f.storeStatus(t, &rec)
	}
	return rec.Host, nil
}

// ownHost refuses a report by rack's agent about old (nil: no host of
// that name) unless old is in rack.
func ownHost(old *hostEntry, rack, name string) error {
	if old == nil {
		return notFound("host %s does not exist", name)
	}
	if old.Rack != rack {
		return newErr(wire.CodeForbidden, "host %s is in rack %s, not %s: an agent reports only hosts of its own rack", name, old.Rack, rack)
	}
	return nil
}

// appendEvents returns old's events followed by add's, stamped with the
// entry's index (and its time, at, and type Normal where unset), the
// oldest dropped beyond MaxEvents; one new slice, sharing nothing with old.
func appendEvents(old []eventRec, add []wire.Event, index uint64, at time.Time) []eventRec {
	if over := len(old) + len(add) - MaxEvents; over > 0 {
		drop := min(over, len(old))
		old, add = old[drop:], add[over-drop:]
	}
	out := make([]eventRec, 0, len(old)+len(add))
	out = append(out, old...)
	for _, e := range add {
		e.Index = index
		if e.Time.IsZero() {
			e.Time = at
		}
		if e.Type == "" {
			e.Type = wire.EventNormal
		}
		out = append(out, packEvent(e))
	}
	return out
}

func cloneImage(i *wire.Image) *wire.Image {
	if i == nil {
		return nil
	}
	c := *i
	return &c
}

func cloneHandoff(h *wire.Handoff) *wire.Handoff {
	if h == nil {
		return nil
	}
	c := *h
	return &c
}

// cloneHints copies root device hints (and their rotational flag), so the
// stored spec shares nothing with the command.
func cloneHints(r *wire.RootDeviceHints) *wire.RootDeviceHints {
	if r == nil {
		return nil
	}
	c := *r
	if r.Rotational != nil {
		v := *r.Rotational
		c.Rotational = &v
	}
	return &c
}

// cloneRef copies a data record reference (interned name), so the stored
// spec shares nothing with the command.
func cloneRef(r *wire.SecretReference) *wire.SecretReference {
	if r == nil {
		return nil
	}
	return &wire.SecretReference{Name: in(r.Name)}
}
