package coordinator

import (
	"errors"
	"maps"
	"testing"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// TestServiceIntentNeedsEveryVoter: the leader writes a service intent
// (operation intent body version 2) only once every voter applies that
// version: a voter from before it would refuse the kind and diverge. A
// reboot (version 1) is written meanwhile.
func TestServiceIntentNeedsEveryVoter(t *testing.T) {
	s, _, record := gateStore(t, "n1", "n2")
	record("n1", s.fsm.Commands(), "new")
	old := maps.Clone(s.fsm.Commands())
	old[fsm.CmdPutOperationIntent], old[fsm.CmdDeleteOperationIntent] = 1, 1
	record("n2", old, "before the service intent")
	for _, c := range []fsm.Command{
		fsm.PutOperationIntentCmd{Name: "h1", Kind: wire.IntentService},
		fsm.DeleteOperationIntentCmd{Name: "h1", Kind: wire.IntentService},
	} {
		b, err := fsm.Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.gate(b); !errors.Is(err, wire.ErrUpgradeRequired) {
			t.Fatalf("%T service with a voter without it: %v", c, err)
		}
	}
	b, _ := fsm.Encode(fsm.PutOperationIntentCmd{Name: "h1", Kind: wire.IntentReboot})
	if err := s.gate(b); err != nil {
		t.Fatalf("reboot with a voter from before the service intent: %v", err)
	}
	record("n2", s.fsm.Commands(), "new")
	b, _ = fsm.Encode(fsm.PutOperationIntentCmd{Name: "h1", Kind: wire.IntentService})
	if err := s.gate(b); err != nil {
		t.Fatalf("service intent, every voter upgraded: %v", err)
	}
}
