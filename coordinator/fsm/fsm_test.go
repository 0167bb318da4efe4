package fsm

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)

type fsmT struct {
	t     *testing.T
	f     *FSM
	index uint64
}

func newFSMT(t *testing.T) *fsmT { return &fsmT{t: t, f: NewFSM()} }

// apply encodes c, applies it as the next log entry and returns its result.
func (h *fsmT) apply(c Command) (any, error) {
	h.t.Helper()
	b, err := Encode(c)
	if err != nil {
		h.t.Fatal(err)
	}
	h.index++
	r := h.f.Apply(h.index, b).(Result)
	return r.Value, r.Err
}

// applyBatch encodes cmds as one batch entry, applies it as the next log
// entry and returns the commands' results.
func (h *fsmT) applyBatch(cmds ...Command) []Result {
	h.t.Helper()
	var parts [][]byte
	for _, c := range cmds {
		b, err := Encode(c)
		if err != nil {
			h.t.Fatal(err)
		}
		parts = append(parts, b)
	}
	h.index++
	return h.f.Apply(h.index, EncodeBatch(parts)).([]Result)
}

func (h *fsmT) ok(c Command) any {
	h.t.Helper()
	v, err := h.apply(c)
	if err != nil {
		h.t.Fatalf("apply %T: %v", c, err)
	}
	return v
}

func (h *fsmT) refused(c Command, code string) *Error {
	h.t.Helper()
	_, err := h.apply(c)
	var e *Error
	if !errors.As(err, &e) || e.Code != code {
		h.t.Fatalf("apply %T: want refusal %s, got %v", c, code, err)
	}
	return e
}

func host(name, rack string) wire.Host {
	return wire.Host{Name: name, Rack: rack, BMC: wire.BMC{Address: "redfish+http://127.0.0.1:9001/redfish/v1/Systems/1", Credentials: "c1"}, Online: true}
}

func TestPutHostCreateUpdateAndRackChange(t *testing.T) {
	h := newFSMT(t)
	r := h.ok(PutHostCmd{Host: host("h1", "r1"), Time: t0}).(PutHostResult)
	if !r.Created || r.Host.CreatedIndex != 1 || r.Host.SpecIndex != 1 || r.Host.ModifiedIndex != 1 {
		t.Fatalf("create: %+v", r)
	}
	// Same spec again: no change, no new index.
	r = h.ok(PutHostCmd{Host: host("h1", "r1"), Time: t0}).(PutHostResult)
	if r.Created || r.Host.ModifiedIndex != 1 {
		t.Fatalf("unchanged put bumped the index: %+v", r)
	}
	up := host("h1", "r1")
	up.Consumer = "job-7"
	// Status/intents/indexes in the body are ignored.
	up.Status = &wire.HostStatus{ProvisioningState: "provisioned"}
	up.CreatedIndex = 99
	r = h.ok(PutHostCmd{Host: up, Time: t0}).(PutHostResult)
	if r.Created || r.Host.Consumer != "job-7" || r.Host.SpecIndex != 3 || r.Host.CreatedIndex != 1 || r.Host.Status != nil {
		t.Fatalf("update: %+v", r.Host)
	}
	e := h.refused(PutHostCmd{Host: host("h1", "r2"), Time: t0}, wire.CodeConflict)
	if e.Field != "rack" || !strings.Contains(e.Message, "delete it") {
		t.Fatalf("rack change refusal: %+v", e)
	}
}

func TestDeleteHostWithoutAndWithStatus(t *testing.T) {
	h := newFSMT(t)
	h.ok(PutHostCmd{Host: host("h1", "r1")})
	if r := h.ok(DeleteHostCmd{Name: "h1"}).(DeleteHostResult); !r.Deleted {
		t.Fatal("host without status must be deleted at once")
	}
	if _, ok := h.f.Host("h1"); ok {
		t.Fatal("still there")
	}
	h.refused(DeleteHostCmd{Name: "h1"}, wire.CodeNotFound)

	h.ok(PutHostCmd{Host: host("h2", "r1")})
	l := h.ok(LeaseAcquireCmd{Rack: "r1", Holder: "a", TTL: 10 * time.Second, Time: t0}).(wire.Lease)
	h.ok(StatusCmd{Rack: "r1", Name: "h2", Report: wire.StatusReport{Epoch: l.Epoch, Status: wire.HostStatus{ProvisioningState: "available"}}, Time: t0})
	if r := h.ok(DeleteHostCmd{Name: "h2"}).(DeleteHostResult); r.Deleted || !r.Host.DeletionRequested {
		t.Fatalf("host with status: want deletion requested, got %+v", r)
	}
	h.ok(StatusCmd{Rack: "r1", Name: "h2", Report: wire.StatusReport{Epoch: l.Epoch, Remove: true}, Time: t0})
	if _, ok := h.f.Host("h2"); ok {
		t.Fatal("Remove did not delete the record")
	}
}

func TestIntentsAndAcks(t *testing.T) {
	h := newFSMT(t)
	h.ok(PutHostCmd{Host: host("h1", "r1")})
	in := h.ok(PutIntentCmd{Name: "h1", Kind: wire.IntentDetach, Intent: wire.Intent{Reason: "move", Actor: "op", Acknowledged: true}}).(wire.Intent)
	if in.CreatedIndex != 2 || in.Acknowledged || in.Actor != "op" {
		t.Fatalf("intent: %+v", in)
	}
	h.ok(PutIntentCmd{Name: "h1", Kind: wire.IntentResume, Intent: wire.Intent{}})
	h.ok(PutIntentCmd{Name: "h1", Kind: wire.IntentDrain, Intent: wire.Intent{Mode: wire.DrainMaintenance}})
	l := h.ok(LeaseAcquireCmd{Rack: "r1", Holder: "a", TTL: 10 * time.Second}).(wire.Lease)
	// An ack for an older createdIndex confirms nothing.
	h.ok(StatusCmd{Rack: "r1", Name: "h1", Report: wire.StatusReport{Epoch: l.Epoch, Acks: []wire.IntentAck{{Kind: wire.IntentDetach, CreatedIndex: 1}}}})
	got, _ := h.f.Host("h1")
	if got.Intents.Detach.Acknowledged {
		t.Fatal("ack with the wrong createdIndex acknowledged the intent")
	}
	h.ok(StatusCmd{Rack: "r1", Name: "h1", Report: wire.StatusReport{Epoch: l.Epoch, Acks: []wire.IntentAck{
		{Kind: wire.IntentDetach, CreatedIndex: 2}, {Kind: wire.IntentResume, CreatedIndex: 3, Drop: true}}}})
	got, _ = h.f.Host("h1")
	if !got.Intents.Detach.Acknowledged || got.Intents.Detach.AckEpoch != l.Epoch || got.Intents.Resume != nil {
		t.Fatalf("acks: %+v", got.Intents)
	}
	// Re-posting replaces: new createdIndex, not acknowledged.
	in2 := h.ok(PutIntentCmd{Name: "h1", Kind: wire.IntentDetach, Intent: wire.Intent{}}).(wire.Intent)
	if in2.CreatedIndex <= in.CreatedIndex || in2.Acknowledged {
		t.Fatalf("repost: %+v", in2)
	}
	h.ok(DeleteIntentCmd{Name: "h1", Kind: wire.IntentDetach})
	got, _ = h.f.Host("h1")
	if got.Intents.Detach != nil || got.Intents.Drain == nil {
		t.Fatalf("attach: %+v", got.Intents)
	}
	// Restore refused once the removal is past its point of no return.
	h.ok(StatusCmd{Rack: "r1", Name: "h1", Report: wire.StatusReport{Epoch: l.Epoch, Status: wire.HostStatus{Extra: map[string]string{"removalCommitted": "true"}}}})
	e := h.refused(DeleteIntentCmd{Name: "h1", Kind: wire.IntentDrain}, wire.CodeConflict)
	if !strings.Contains(e.Message, "point of no return") {
		t.Fatal(e)
	}
	h.refused(PutIntentCmd{Name: "nope", Kind: wire.IntentDetach}, wire.CodeNotFound)
	// A kind this command does not carry (a hand-made log entry: the API
	// validates kinds) is an error result, never a panic of the FSM.
	h.refused(DeleteIntentCmd{Name: "h1", Kind: "reboot"}, wire.CodeBadRequest)
	h.refused(PutIntentCmd{Name: "h1", Kind: "reboot"}, wire.CodeBadRequest)
}

func TestStatusStaleEpochRefusedInFSM(t *testing.T) {
	h := newFSMT(t)
	h.ok(PutHostCmd{Host: host("h1", "r1")})
	h.ok(PutHostCmd{Host: host("h2", "r2")})
	rep := func(ep uint64) wire.StatusReport {
		return wire.StatusReport{Epoch: ep, Status: wire.HostStatus{ProvisioningState: "registering"}}
	}
	h.refused(StatusCmd{Rack: "r1", Name: "h1", Report: rep(5)}, wire.CodeStaleEpoch) // no lease
	l1 := h.ok(LeaseAcquireCmd{Rack: "r1", Holder: "a", TTL: 10 * time.Second}).(wire.Lease)
	h.refused(StatusCmd{Rack: "r1", Name: "h1", Report: rep(l1.Epoch - 1)}, wire.CodeStaleEpoch)
	h.refused(StatusCmd{Rack: "r1", Name: "h2", Report: rep(l1.Epoch)}, wire.CodeForbidden) // other rack's host
	got := h.ok(StatusCmd{Rack: "r1", Name: "h1", Report: rep(l1.Epoch), Time: t0}).(wire.Host)
	if got.Status.Epoch != l1.Epoch || !got.Status.LastUpdated.Equal(t0) {
		t.Fatalf("status stamp: %+v", got.Status)
	}
	// The lease expires and another agent takes the rack: the old epoch is refused.
	h.ok(LeaseExpireCmd{Rack: "r1", Epoch: l1.Epoch, RenewIndex: l1.Epoch})
	l2 := h.ok(LeaseAcquireCmd{Rack: "r1", Holder: "b", TTL: 10 * time.Second}).(wire.Lease)
	e := h.refused(StatusCmd{Rack: "r1", Name: "h1", Report: rep(l1.Epoch)}, wire.CodeStaleEpoch)
	if !strings.Contains(e.Message, "held by b") {
		t.Fatal(e)
	}
	h.ok(StatusCmd{Rack: "r1", Name: "h1", Report: rep(l2.Epoch)})
}

func TestLeaseCompareAndSet(t *testing.T) {
	h := newFSMT(t)
	l := h.ok(LeaseAcquireCmd{Rack: "r1", Holder: "a", TTL: 5 * time.Second, Time: t0}).(wire.Lease)
	if l.Epoch != 1 || l.Holder != "a" || l.TTL.D() != 5*time.Second {
		t.Fatalf("grant: %+v", l)
	}
	e := h.refused(LeaseAcquireCmd{Rack: "r1", Holder: "b", TTL: 5 * time.Second}, wire.CodeConflict)
	if !strings.Contains(e.Message, "held by a under epoch 1") {
		t.Fatal(e)
	}
	// Renewal by a stale epoch or another holder is refused.
	h.refused(LeaseRenewCmd{Rack: "r1", Holder: "a", Epoch: 7}, wire.CodeStaleEpoch)
	h.refused(LeaseRenewCmd{Rack: "r1", Holder: "b", Epoch: 1}, wire.CodeStaleEpoch)
	h.ok(LeaseRenewCmd{Rack: "r1", Holder: "a", Epoch: 1}) // index 5
	// An expiry armed before the renewal is a no-op (compare-and-set).
	if v := h.ok(LeaseExpireCmd{Rack: "r1", Epoch: 1, RenewIndex: 1}); v != false {
		t.Fatal("expiry of an older renewal took effect")
	}
	if h.f.Lease("r1") == nil {
		t.Fatal("lease gone")
	}
	if v := h.ok(LeaseExpireCmd{Rack: "r1", Epoch: 1, RenewIndex: 5, Time: t0.Add(time.Minute)}); v != true {
		t.Fatal("expiry of the current renewal did not take effect")
	}
	l2 := h.ok(LeaseAcquireCmd{Rack: "r1", Holder: "b", TTL: 5 * time.Second, Time: t0}).(wire.Lease)
	if l2.Epoch != 8 {
		t.Fatalf("epoch is the granting index: %+v", l2)
	}
	// Same holder again: a new epoch.
	l3 := h.ok(LeaseAcquireCmd{Rack: "r1", Holder: "b", TTL: 5 * time.Second, Time: t0}).(wire.Lease)
	if l3.Epoch != 9 {
		t.Fatalf("re-acquire: %+v", l3)
	}
	h.refused(LeaseReleaseCmd{Rack: "r1", Holder: "b", Epoch: 8}, wire.CodeStaleEpoch)
	h.ok(LeaseReleaseCmd{Rack: "r1", Holder: "b", Epoch: 9, Time: t0})
	hist, _ := h.f.LeaseHistory("r1")
	if len(hist) != 3 || hist[0].End != EndExpired || hist[1].End != EndReleased || hist[2].End != EndReleased || hist[2].EndedAt == nil {
		t.Fatalf("history: %+v", hist)
	}
}

func TestEventsBounded(t *testing.T) {
	h := newFSMT(t)
	h.ok(PutHostCmd{Host: host("h1", "r1")})
	l := h.ok(LeaseAcquireCmd{Rack: "r1", Holder: "a", TTL: 10 * time.Second}).(wire.Lease)
	for i := 0; i < 30; i++ {
		evs := make([]wire.Event, 5)
		for j := range evs {
			evs[j] = wire.Event{Reason: "R", Message: strings.Repeat("x", i)}
		}
		h.ok(StatusCmd{Rack: "r1", Name: "h1", Report: wire.StatusReport{Epoch: l.Epoch, Events: evs}, Time: t0})
	}
	evs, _, _ := h.f.Events("h1")
	if len(evs) != MaxEvents || evs[len(evs)-1].Index != h.index || evs[0].Type != wire.EventNormal || !evs[0].Time.Equal(t0) {
		t.Fatalf("events: %d, last %+v", len(evs), evs[len(evs)-1])
	}
}

func TestWatchChangesAndTombstones(t *testing.T) {
	h := newFSMT(t)
	h.ok(PutHostCmd{Host: host("h1", "r1")})
	h.ok(PutHostCmd{Host: host("h2", "r1")})
	h.ok(PutHostCmd{Host: host("x1", "r2")})
	resp, ok := h.f.changes("r1", 0)
	if !ok || len(resp.Hosts) != 2 || resp.Index != 3 {
		t.Fatalf("index 0: %+v", resp)
	}
	if _, ok := h.f.changes("r1", 3); ok {
		t.Fatal("change in another rack woke r1")
	}
	h.ok(DeleteHostCmd{Name: "h1"})
	resp, ok = h.f.changes("r1", 3)
	if !ok || len(resp.Hosts) != 0 || len(resp.Deleted) != 1 || resp.Deleted[0] != "h1" {
		t.Fatalf("deletion: %+v", resp)
	}
	// Many deletions push the floor: an old watcher resets.
	for i := 0; i < MaxTombstones+5; i++ {
		n := "t" + strings.Repeat("0", 1) + itoa(i)
		h.ok(PutHostCmd{Host: host(n, "r1")})
		h.ok(DeleteHostCmd{Name: n})
	}
	resp, ok = h.f.changes("r1", 3)
	if !ok || !resp.Reset || len(resp.Hosts) != 1 || resp.Hosts[0].Name != "h2" {
		t.Fatalf("reset: ok=%v reset=%v hosts=%d", ok, resp.Reset, len(resp.Hosts))
	}
	h.ok(LeaseAcquireCmd{Rack: "r1", Holder: "a", TTL: time.Second})
	resp, ok = h.f.changes("r1", h.index-1)
	if !ok || resp.Lease == nil || resp.Lease.Holder != "a" {
		t.Fatalf("lease change: %+v", resp)
	}
}

func itoa(i int) string {
	return strings.TrimSpace(strings.Replace(time.Duration(i).String(), "ns", "", 1))
}

func TestBatchEntryAppliesEachCommand(t *testing.T) {
	h := newFSMT(t)
	out := h.applyBatch(PutHostCmd{Host: host("h1", "r1")}, PutHostCmd{Host: host("h1", "r2")}, PutHostCmd{Host: host("h3", "r1")})
	if len(out) != 3 || out[0].Err != nil || out[1].Err == nil || out[2].Err != nil {
		t.Fatalf("batch results: %+v", out)
	}
	if h.f.AppliedIndex() != 1 {
		t.Fatal("applied index")
	}
	if _, err := DecodeBatch([]byte{byte(CmdBatch), batchVersion, 5, 1}); err == nil {
		t.Fatal("truncated batch decoded")
	}
}

// fullState builds a state exercising every kind of record.
func fullState(t *testing.T) *fsmT {
	h := newFSMT(t)
	h.ok(InitCmd{ClusterID: "c0ffee", AdminTokenHash: HashToken("secret")})
	h.ok(SetMemberCmd{ID: "n1", HTTPAddr: "http://127.0.0.1:7480"})
	h.ok(PutCredentialsCmd{Name: "c1", Username: "admin", Password: "password"})
	h.ok(PutTokenCmd{Hash: HashToken("agent"), Name: "agent-1", Role: "agent", Rack: "r1"})
	for _, n := range []string{"h1", "h2", "h3"} {
		x := host(n, "r1")
		x.Image = &wire.Image{URL: "http://i/u.qcow2", Checksum: "sha256:ab"}
		h.ok(PutHostCmd{Host: x, Time: t0})
	}
	l := h.ok(LeaseAcquireCmd{Rack: "r1", Holder: "a", TTL: 10 * time.Second, Time: t0}).(wire.Lease)
	h.ok(PutIntentCmd{Name: "h1", Kind: wire.IntentDrain, Intent: wire.Intent{Mode: wire.DrainRemoval, Reason: "bye"}})
	h.ok(StatusCmd{Rack: "r1", Name: "h1", Time: t0, Report: wire.StatusReport{Epoch: l.Epoch,
		Status: wire.HostStatus{ProvisioningState: "provisioned", OperationalStatus: "ok", HardwareDetails: &wire.HardwareDetails{
			Manufacturer: "Sim", CPUs: []wire.CPU{{Model: "x", Cores: 8}}, NICs: []wire.NIC{{Name: "eth0", MAC: "52:54:00:00:00:01"}},
			Disks: []wire.Disk{{Name: "sda", SizeBytes: 1 << 40}}, Firmware: []wire.Firmware{{Name: "bios", Version: "1"}}}, Extra: map[string]string{"k": "v"}},
		Events: []wire.Event{{Reason: "Provisioned", Message: "done"}}}})
	h.ok(DeleteHostCmd{Name: "h3"})
	h.ok(LeaseAcquireCmd{Rack: "r9", Holder: "z", TTL: time.Second, Time: t0})
	return h
}

func TestSnapshotRestoreRoundTrip(t *testing.T) {
	h := fullState(t)
	var buf bytes.Buffer
	if err := h.f.snapshot().Encode(&buf); err != nil {
		t.Fatal(err)
	}
	g := NewFSM()
	g.s.Hosts["stale"] = &hostEntry{} // Restore must discard prior state
	if err := g.Restore(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	if g.AppliedIndex() != h.f.AppliedIndex() {
		t.Fatalf("applied %d != %d", g.AppliedIndex(), h.f.AppliedIndex())
	}
	if !sameState(g.s, h.f.s) {
		t.Fatalf("restored state differs:\n got %+v\nwant %+v", g.s, h.f.s)
	}
	// And it keeps working identically: the same next command gives the same result.
	a, _ := h.apply(PutHostCmd{Host: host("h9", "r1")})
	hg := &fsmT{t: t, f: g, index: h.index - 1}
	b, _ := hg.apply(PutHostCmd{Host: host("h9", "r1")})
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("after restore: %+v vs %+v", a, b)
	}
	// Unknown version is refused.
	bad := bytes.Replace(buf.Bytes(), []byte("rackfence-snapshot 2"), []byte("rackfence-snapshot 9"), 1)
	if err := NewFSM().Restore(bytes.NewReader(bad)); !errors.Is(err, ErrSnapshotVersion) {
		t.Fatal(err)
	}
}

func TestPivotedAndHandBack(t *testing.T) {
	h := newFSMT(t)
	h.ok(PutHostCmd{Host: host("h1", "r1")})
	h.ok(PutIntentCmd{Name: "h1", Kind: wire.IntentDetach, Intent: wire.Intent{Reason: "pivot to b"}})
	got := h.ok(SetPivotedCmd{Name: "h1", To: "b"}).(wire.Host)
	if got.PivotedTo != "b" {
		t.Fatalf("pivoted: %+v", got)
	}
	// A spec PUT keeps PivotedTo.
	up := host("h1", "r1")
	up.Consumer = "x"
	if r := h.ok(PutHostCmd{Host: up}).(PutHostResult); r.Host.PivotedTo != "b" {
		t.Fatalf("put lost pivotedTo: %+v", r.Host)
	}
	// Handed back from b with a confirmed handoff: re-attached here.
	back := host("h1", "r1")
	back.Handoff = &wire.Handoff{SourceTier: "b", SourceClusterID: "cb", DetachIndex: 9, Confirmed: true}
	r := h.ok(PutHostCmd{Host: back}).(PutHostResult)
	if r.Host.PivotedTo != "" || r.Host.Intents != nil {
		t.Fatalf("hand back: %+v", r.Host)
	}
	// A new host arriving by a confirmed handoff keeps the carried status.
	in := host("h2", "r1")
	in.Handoff = &wire.Handoff{SourceTier: "b", SourceClusterID: "cb", DetachIndex: 3, Confirmed: true}
	in.Status = &wire.HostStatus{ProvisioningState: wire.StateProvisioned, ErrorMessage: "dropped", HardwareDetails: &wire.HardwareDetails{Model: "m"}}
	r = h.ok(PutHostCmd{Host: in, Time: t0}).(PutHostResult)
	if r.Host.Status == nil || r.Host.Status.HardwareDetails.Model != "m" || r.Host.Status.ErrorMessage != "" || !r.Host.Status.LastUpdated.Equal(t0) {
		t.Fatalf("carried status: %+v", r.Host.Status)
	}
	// deleteSource deletes (no status) at once.
	if d := h.ok(SetPivotedCmd{Name: "h1", To: "b", DeleteSource: true}).(DeleteHostResult); !d.Deleted {
		t.Fatal("deleteSource did not delete")
	}
	h.refused(SetPivotedCmd{Name: "nope", To: "b"}, wire.CodeNotFound)
}

func TestMiscCommands(t *testing.T) {
	h := newFSMT(t)
	if v := h.ok(InitCmd{ClusterID: "c1", AdminTokenHash: HashToken("a")}); v != true {
		t.Fatal("first init")
	}
	if v := h.ok(InitCmd{ClusterID: "c2"}); v != false || h.f.ClusterID() != "c1" {
		t.Fatal("second init changed the cluster ID")
	}
	if ti, ok := h.f.Token(HashToken("a")); !ok || ti.Role != wire.RoleAdmin {
		t.Fatalf("admin token: %+v", ti)
	}
	h.ok(PutTokenCmd{Hash: HashToken("g"), Name: "agent-x", Role: wire.RoleAgent, Rack: "r1"})
	if ti, _ := h.f.Token(HashToken("g")); ti.Rack != "r1" || ti.Name != "agent-x" {
		t.Fatalf("agent token: %+v", ti)
	}
	if _, ok := h.f.Token(HashToken("nope")); ok {
		t.Fatal("unknown token found")
	}
	if v := h.ok(PutCredentialsCmd{Name: "c", Username: "u", Password: "p"}); v != true {
		t.Fatal("created")
	}
	if v := h.ok(PutCredentialsCmd{Name: "c", Username: "u2", Password: "p2"}); v != false {
		t.Fatal("updated")
	}
	if c, ok := h.f.Credentials("c"); !ok || c.Username != "u2" || c.Plaintext != "p2" || c.Sealed != nil {
		t.Fatal("credentials")
	}
	h.ok(PutHostCmd{Host: host("h1", "r1")})
	if !h.f.RackUsesCredentials("r1", "c1") || h.f.RackUsesCredentials("r2", "c1") || h.f.RackUsesCredentials("r1", "c") {
		t.Fatal("RackUsesCredentials")
	}
	h.ok(SetMemberCmd{ID: "n1", HTTPAddr: "http://a"})
	h.ok(SetMemberCmd{ID: "n1", HTTPAddr: "http://b"})
	if h.f.MemberHTTP("n1") != "http://b" {
		t.Fatal("member")
	}
	h.ok(RemoveMemberCmd{ID: "n1"})
	if h.f.MemberHTTP("n1") != "" {
		t.Fatal("member not removed")
	}
	before := h.f.AppliedIndex()
	h.ok(NoopCmd{Node: "n1"})
	if h.f.AppliedIndex() != before+1 {
		t.Fatal("noop not applied")
	}
	h.f.MarkApplied(before + 5)
	if h.f.AppliedIndex() != before+5 {
		t.Fatal("configuration entry does not count as applied")
	}
	h.f.MarkApplied(before + 2)
	if h.f.AppliedIndex() != before+5 {
		t.Fatal("an older entry moved the applied index back")
	}
}

// applier returns a function that encodes a command, applies it to f as
// the next log entry and returns its value, failing tb on an error.
func applier(tb testing.TB, f *FSM) func(Command) any { return packedApplier(tb, f, nil) }

// packedApplier is applier with pack (when not nil) turning each encoded
// command into the entry applied, as the leader's compression does.
func packedApplier(tb testing.TB, f *FSM, pack func([]byte) []byte) func(Command) any {
	var idx uint64
	return func(c Command) any {
		tb.Helper()
		data, err := Encode(c)
		if err != nil {
			tb.Fatal(err)
		}
		if pack != nil {
			data = pack(data)
		}
		idx++
		r := f.Apply(idx, data).(Result)
		if r.Err != nil {
			tb.Fatal(r.Err)
		}
		return r.Value
	}
}

// sameState reports whether a and b hold the same state but for what a
// snapshot leaves out: reflect.DeepEqual with every rack's seen
// (watch_index.go, bookkeeping of the entries applied) zeroed in copies.
func sameState(a, b *state) bool {
	return reflect.DeepEqual(withoutSeen(a), withoutSeen(b))
}

func withoutSeen(s *state) *state {
	c := *s
	c.Racks = make(map[string]*rackRec, len(s.Racks))
	for n, r := range s.Racks {
		rc := *r
		rc.seen = seenAt{}
		c.Racks[n] = &rc
	}
	return &c
}
