package coordinator

import (
	"testing"
)

// TestCommandTableCoversEveryCommand: every command this binary writes is
// in commandVersions at the version Encode writes, and the legacy table is
// a subset (a release never stops applying what it applied).
func TestCommandTableCoversEveryCommand(t *testing.T) {
	all := []Command{InitCmd{}, PutHostCmd{}, DeleteHostCmd{}, PutIntentCmd{}, DeleteIntentCmd{}, StatusCmd{},
		LeaseAcquireCmd{}, LeaseRenewCmd{}, LeaseReleaseCmd{}, LeaseExpireCmd{}, PutCredentialsCmd{}, PutTokenCmd{},
		SetMemberCmd{}, RemoveMemberCmd{}, NoopCmd{}, SetPivotedCmd{}, RevokeTokenCmd{}, TouchTokensCmd{},
		PutSealedCredentialsCmd{}, ResealCredentialsCmd{}}
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
	for ct, v := range legacyVersions {
		if commandVersions[ct] < v {
			t.Errorf("command type %d: legacy applies version %d, this binary only %d", ct, v, commandVersions[ct])
		}
	}
	if m := missing(commandVersions); len(m) != 0 {
		t.Fatalf("missing from itself: %v", m)
	}
	if got := missing(TestOnlyCommandsWithout(CmdRevokeToken)); len(got) != 1 || got[0] != "18/1" {
		t.Fatalf("missing without revoke: %v", got)
	}
	if table(wireCommands(commandVersions))[CmdPutToken] != putTokenVersion {
		t.Fatal("wire table round trip")
	}
}
