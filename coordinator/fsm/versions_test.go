package fsm

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// TestEveryCmdTypeIsInTheTable: every CmdType constant declared in the
// package's sources has an entry in commandTable (and so in
// commandVersions); a type missing there would be written by this binary
// and then stop its own FSM as unknown.
func TestEveryCmdTypeIsInTheTable(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for path, f := range pkgs["fsm"].Files {
		if strings.HasSuffix(path, "_test.go") {
			continue // tests declare made-up types (coordinator/gate_test.go)
		}
		ast.Inspect(f, func(x ast.Node) bool {
			vs, ok := x.(*ast.ValueSpec)
			if !ok {
				return true
			}
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "CmdType" {
				return true
			}
			for _, name := range vs.Names {
				n++
				ct, ok := cmdTypeByName[name.Name]
				if !ok {
					t.Errorf("%s (%s) is not in the test's name table: add it there and to commandTable", name.Name, fset.Position(name.Pos()))
					continue
				}
				if _, ok := commandTable[ct]; !ok {
					t.Errorf("%s (type %d) has no entry in commandTable (command_table.go)", name.Name, ct)
				}
				if commandVersions[ct] == 0 {
					t.Errorf("%s (type %d) is not in commandVersions (versions.go)", name.Name, ct)
				}
			}
			return true
		})
	}
	if n < 20 {
		t.Fatalf("found %d CmdType constants: the scan is broken", n)
	}
}

var cmdTypeByName = map[string]CmdType{
	"CmdInit": CmdInit, "CmdPutHost": CmdPutHost, "CmdDeleteHost": CmdDeleteHost, "CmdPutIntent": CmdPutIntent,
	"CmdDeleteIntent": CmdDeleteIntent, "CmdStatus": CmdStatus, "CmdLeaseAcquire": CmdLeaseAcquire,
	"CmdLeaseRenew": CmdLeaseRenew, "CmdLeaseRelease": CmdLeaseRelease, "CmdLeaseExpire": CmdLeaseExpire,
	"CmdPutCredentials": CmdPutCredentials, "CmdPutToken": CmdPutToken, "CmdSetMember": CmdSetMember,
	"CmdRemoveMember": CmdRemoveMember, "CmdBatch": CmdBatch, "CmdNoop": CmdNoop, "CmdSetPivoted": CmdSetPivoted,
	"CmdRevokeToken": CmdRevokeToken, "CmdTouchTokens": CmdTouchTokens,
	"CmdPutSealedCredentials": CmdPutSealedCredentials, "CmdResealCredentials": CmdResealCredentials,
	"CmdPutOperationIntent": CmdPutOperationIntent, "CmdDeleteOperationIntent": CmdDeleteOperationIntent,
	"CmdCompressed":         CmdCompressed,
	"CmdRackStatus":         CmdRackStatus,
	"CmdBMCTask":            CmdBMCTask,
	"CmdBMCAccount":         CmdBMCAccount,
	"CmdRequestBMCRotation": CmdRequestBMCRotation,
}

// TestCommandTableCoversEveryCommand: every command this binary writes is
// in commandVersions at the version Encode writes, and the legacy table is
// a subset (a release never stops applying what it applied).
func TestCommandTableCoversEveryCommand(t *testing.T) {
	all := []Command{InitCmd{}, PutHostCmd{}, DeleteHostCmd{}, PutIntentCmd{}, DeleteIntentCmd{}, StatusCmd{},
		LeaseAcquireCmd{}, LeaseRenewCmd{}, LeaseReleaseCmd{}, LeaseExpireCmd{}, PutCredentialsCmd{}, PutTokenCmd{},
		SetMemberCmd{}, RemoveMemberCmd{}, NoopCmd{}, SetPivotedCmd{}, RevokeTokenCmd{}, TouchTokensCmd{},
		PutSealedCredentialsCmd{}, ResealCredentialsCmd{}, PutOperationIntentCmd{}, DeleteOperationIntentCmd{},
		RackStatusCmd{}, BMCTaskCmd{}, BMCAccountCmd{}, RequestBMCRotationCmd{}}
	for _, c := range all {
		b, err := Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		if !knows(commandVersions, b) {
			t.Errorf("command type %d is written at body version %d, but commandVersions has %d", b[0], b[1], commandVersions[CmdType(b[0])])
		}
		if _, err := Decode(b); err != nil {
			t.Errorf("type %d: %v", b[0], err)
		}
	}
	for ct, v := range LegacyVersions {
		if commandVersions[ct] < v {
			t.Errorf("command type %d: legacy applies version %d, this binary only %d", ct, v, commandVersions[ct])
		}
	}
	if m := Missing(commandVersions, commandVersions); len(m) != 0 {
		t.Fatalf("missing from itself: %v", m)
	}
	if got := Missing(commandVersions, commandsWithout(CmdRevokeToken)); len(got) != 1 || got[0] != "18/1" {
		t.Fatalf("missing without revoke: %v", got)
	}
	if Table(WireCommands(commandVersions))[CmdPutToken] != putTokenVersion {
		t.Fatal("wire table round trip")
	}
}

// TestTableEntriesMatchTheirType: every entry of commandTable decodes and
// applies the command whose Type is the entry's number, and its version
// is what Encode writes at most; framing (batch, compressed) has neither
// decoder nor apply.
func TestTableEntriesMatchTheirType(t *testing.T) {
	for ct, s := range commandTable {
		if ct == CmdBatch || ct == CmdCompressed {
			if s.decode != nil || s.apply != nil || s.zero != nil {
				t.Errorf("type %d is framing but has a decoder or apply", ct)
			}
			continue
		}
		if s.zero == nil || s.decode == nil || s.apply == nil {
			t.Errorf("type %d: entry without command, decoder or apply", ct)
			continue
		}
		if s.zero.Type() != ct {
			t.Errorf("entry %d holds %T, whose Type is %d", ct, s.zero, s.zero.Type())
		}
		b, err := Encode(s.zero)
		if err != nil {
			t.Fatal(err)
		}
		if b[1] > s.version {
			t.Errorf("type %d: Encode writes version %d, the entry reads up to %d", ct, b[1], s.version)
		}
		c, err := Decode(b)
		if err != nil || c.Type() != ct {
			t.Errorf("type %d: decoded %T, %v", ct, c, err)
		}
	}
}

// TestOnlyLeasesLead: the rack lease commands go ahead of queued writes
// on the leader; nothing else does (a command that leads is never shed
// as busy, so the list stays short).
func TestOnlyLeasesLead(t *testing.T) {
	lead := map[CmdType]bool{CmdLeaseAcquire: true, CmdLeaseRenew: true, CmdLeaseRelease: true, CmdLeaseExpire: true}
	for typ := range commandTable {
		if Leads(typ) != lead[typ] {
			t.Errorf("Leads(%d) = %v, want %v", typ, Leads(typ), lead[typ])
		}
	}
}
