package coordinator

import (
	"errors"
	"maps"
	"testing"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// TestBMCRotationRequestNeedsEveryVoter: an on-demand rotation request is
// written only once every voter applies its command type; before, it is
// refused with upgrade_required (a voter without it would stop at the
// entry, and would not drop the request at the holder's confirm).
func TestBMCRotationRequestNeedsEveryVoter(t *testing.T) {
	s, _, record := gateStore(t, "n1", "n2")
	record("n1", s.fsm.Commands(), "new")
	old := maps.Clone(s.fsm.Commands())
	delete(old, fsm.CmdRequestBMCRotation)
	record("n2", old, "before on-demand rotation")
	b, err := fsm.Encode(fsm.RequestBMCRotationCmd{Name: "h1", Actor: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.gate(b); !errors.Is(err, wire.ErrUpgradeRequired) {
		t.Fatalf("rotation request with a voter without it: %v", err)
	}
	record("n2", s.fsm.Commands(), "new")
	if err := s.gate(b); err != nil {
		t.Fatalf("rotation request, every voter upgraded: %v", err)
	}
}
