package fsm

import (
	"bytes"
	"compress/gzip"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// applyRaw applies bytes exactly as they sit in a Raft log.
func (h *fsmT) applyRaw(b []byte) Result {
	h.t.Helper()
	h.index++
	return h.f.Apply(h.index, b).(Result)
}

// Entries written by the binaries before tokens had IDs and times: type
// byte, body version 1, the JSON those binaries wrote. They stay in logs.
var (
	oldAdminHash = HashToken("old-admin-secret")
	oldAgentHash = HashToken("old-agent-secret")
	oldInit      = append([]byte{byte(CmdInit), 1}, `{"clusterID":"c0ffee","adminTokenHash":"`+oldAdminHash+`"}`...)
	oldPutToken  = append([]byte{byte(CmdPutToken), 1}, `{"hash":"`+oldAgentHash+`","name":"agent-`+oldAgentHash[:8]+`","role":"agent","rack":"r1"}`...)
)

func TestOldTokenEntriesStillApply(t *testing.T) {
	h := newFSMT(t)
	if r := h.applyRaw(oldInit); r.Err != nil || r.Value != true {
		t.Fatalf("old init: %+v", r)
	}
	if r := h.applyRaw(oldPutToken); r.Err != nil {
		t.Fatalf("old put token: %v", r.Err)
	}
	admin, ok := h.f.Token(oldAdminHash)
	if !ok || admin.ID != oldAdminHash[:TokenIDLen] || admin.Role != wire.RoleAdmin || !admin.CreatedAt.IsZero() {
		t.Fatalf("admin token from an old init: %+v", admin)
	}
	agent, ok := h.f.TokenByID(oldAgentHash[:TokenIDLen])
	if !ok || agent.Rack != "r1" || !agent.ExpiresAt.IsZero() || agent.Expired(t0.Add(100*365*24*time.Hour)) {
		t.Fatalf("agent token from an old entry: %+v", agent)
	}
}

func TestPutTokenWritesVersion2AndNewerIsRefused(t *testing.T) {
	c := PutTokenCmd{Hash: HashToken("x"), Name: "n", Role: wire.RoleViewer, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	b, err := Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != byte(CmdPutToken) || b[1] != 2 {
		t.Fatalf("PutTokenCmd encoded as type %d version %d, want 12/2", b[0], b[1])
	}
	got, err := Decode(b)
	if err != nil || got.(PutTokenCmd) != c {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	// A binary that knows version 2 refuses version 3 rather than dropping
	// fields it does not know; other commands stay at version 1.
	b[1] = 3
	if _, err := Decode(b); !errors.Is(err, ErrUnknownCommand) {
		t.Fatalf("version 3: %v", err)
	}
	if _, err := Decode(append([]byte{byte(CmdRemoveMember), 2}, "{}"...)); !errors.Is(err, ErrUnknownCommand) {
		t.Fatalf("RemoveMember version 2: %v", err)
	}
	// PutHost's version 2 is its binary body (codec.go), 3 the binary
	// body naming config drive records, 4 the one with a day-two spec;
	// 5 is unknown.
	if _, err := Decode(append([]byte{byte(CmdPutHost), 5}, "{}"...)); !errors.Is(err, ErrUnknownCommand) {
		t.Fatalf("PutHost version 5: %v", err)
	}
	if b, _ := Encode(RevokeTokenCmd{ID: "ab", Time: t0}); b[1] != 1 {
		t.Fatalf("RevokeTokenCmd version %d", b[1])
	}
}

func TestTokenLifecycleInFSM(t *testing.T) {
	h := newFSMT(t)
	h.ok(InitCmd{ClusterID: "c", AdminTokenHash: HashToken("admin"), Time: t0})
	adminID := TokenID(HashToken("admin"))
	if a, _ := h.f.TokenByID(adminID); !a.CreatedAt.Equal(t0) || a.Name != "admin" {
		t.Fatalf("bootstrap admin: %+v", a)
	}
	v := h.ok(PutTokenCmd{Hash: HashToken("ag"), Name: "agent-r1", Role: wire.RoleAgent, Rack: "r1", CreatedAt: t0.Add(time.Minute), ExpiresAt: t0.Add(time.Hour)}).(TokenInfo)
	agentID := TokenID(HashToken("ag"))
	if v.ID != agentID || !v.ExpiresAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("put answered %+v", v)
	}
	if !v.Expired(t0.Add(time.Hour)) || v.Expired(t0.Add(59*time.Minute)) {
		t.Fatal("Expired is wrong at the boundary")
	}

	// Touch: newer times move LastUsed, older and unknown ones do not.
	h.ok(TouchTokensCmd{Used: map[string]time.Time{agentID: t0.Add(5 * time.Minute), "0000000000000000": t0}})
	h.ok(TouchTokensCmd{Used: map[string]time.Time{agentID: t0.Add(2 * time.Minute)}})
	if a, _ := h.f.TokenByID(agentID); !a.LastUsed.Equal(t0.Add(5 * time.Minute)) {
		t.Fatalf("last used %v", a.LastUsed)
	}

	list, _ := h.f.TokenList()
	if len(list) != 2 || list[0].ID != adminID || list[1].ID != agentID {
		t.Fatalf("list: %+v", list)
	}

	// The last valid admin token cannot be revoked; once another exists it can.
	e := h.refused(RevokeTokenCmd{ID: adminID, Time: t0}, wire.CodeConflict)
	if !strings.Contains(e.Message, "last valid admin token") {
		t.Fatal(e.Message)
	}
	// An expired admin token does not count as the other one.
	h.ok(PutTokenCmd{Hash: HashToken("old"), Name: "old", Role: wire.RoleAdmin, CreatedAt: t0, ExpiresAt: t0.Add(time.Minute)})
	h.refused(RevokeTokenCmd{ID: adminID, Time: t0.Add(time.Hour)}, wire.CodeConflict)
	h.ok(PutTokenCmd{Hash: HashToken("admin2"), Name: "admin2", Role: wire.RoleAdmin, CreatedAt: t0})
	if r := h.ok(RevokeTokenCmd{ID: adminID, Time: t0.Add(time.Hour)}).(TokenInfo); r.ID != adminID {
		t.Fatalf("revoke answered %+v", r)
	}
	if _, ok := h.f.Token(HashToken("admin")); ok {
		t.Fatal("revoked token still known")
	}
	h.refused(RevokeTokenCmd{ID: adminID, Time: t0}, wire.CodeNotFound)
	h.ok(RevokeTokenCmd{ID: agentID, Time: t0})
	// A touch of a revoked token does not bring it back.
	h.ok(TouchTokensCmd{Used: map[string]time.Time{agentID: t0.Add(time.Hour)}})
	if _, ok := h.f.TokenByID(agentID); ok {
		t.Fatal("touch revived a revoked token")
	}
}

func TestSnapshotKeepsTokenLifecycleAndReadsOldTokens(t *testing.T) {
	h := newFSMT(t)
	h.ok(InitCmd{ClusterID: "c", AdminTokenHash: HashToken("admin"), Time: t0})
	h.ok(PutTokenCmd{Hash: HashToken("v"), Name: "v", Role: wire.RoleViewer, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)})
	h.ok(TouchTokensCmd{Used: map[string]time.Time{TokenID(HashToken("v")): t0.Add(time.Minute)}})
	var buf bytes.Buffer
	if err := h.f.snapshot().Encode(&buf); err != nil {
		t.Fatal(err)
	}
	g := NewFSM()
	if err := g.Restore(&buf); err != nil {
		t.Fatal(err)
	}
	v, ok := g.TokenByID(TokenID(HashToken("v")))
	if !ok || !v.ExpiresAt.Equal(t0.Add(time.Hour)) || !v.LastUsed.Equal(t0.Add(time.Minute)) || !v.CreatedAt.Equal(t0) {
		t.Fatalf("after restore: %+v %v", v, ok)
	}

	// A snapshot written before tokens had IDs: the meta line as those
	// binaries wrote it.
	var old bytes.Buffer
	old.WriteString("rackfence-snapshot 2\n")
	zw := gzip.NewWriter(&old)
	zw.Write([]byte(`{"applied":7,"clusterID":"c0ffee","members":{"n1":"http://127.0.0.1:7480"},"creds":{},"tokens":{"` +
		oldAdminHash + `":{"name":"admin","role":"admin"},"` + oldAgentHash + `":{"name":"agent-1","role":"agent","rack":"r1"}},"racks":{},"hostCount":0}` + "\n"))
	zw.Close()
	o := NewFSM()
	if err := o.Restore(&old); err != nil {
		t.Fatal(err)
	}
	a, ok := o.TokenByID(oldAgentHash[:TokenIDLen])
	if !ok || a.Rack != "r1" || a.Role != wire.RoleAgent {
		t.Fatalf("old snapshot token: %+v %v", a, ok)
	}
	if r := o.Apply(8, mustEncode(t, RevokeTokenCmd{ID: a.ID, Time: t0})).(Result); r.Err != nil {
		t.Fatalf("revoke a token from an old snapshot: %v", r.Err)
	}
}

func mustEncode(t *testing.T, c Command) []byte {
	t.Helper()
	b, err := Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
