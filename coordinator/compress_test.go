package coordinator

import (
	"bytes"
	"testing"

	"github.com/rackfence/rackfence/coordinator/fsm"
)

// TestCompressionWaitsForEveryVoter: the leader writes compressed entries
// only once every voter applies them; before that (a rolling upgrade from
// a binary without them) a large entry goes to the log as it is.
func TestCompressionWaitsForEveryVoter(t *testing.T) {
	s, _, record := gateStore(t, "n1", "n2")
	record("n1", s.fsm.Commands(), "new")
	record("n2", fsm.LegacyVersions, fsm.LegacyVersion)

	big := append([]byte{byte(fsm.CmdBatch), 1}, bytes.Repeat([]byte("hardware details "), 1000)...)
	if got := s.compressEntry(big); !bytes.Equal(got, big) {
		t.Fatalf("compressed with a voter that does not apply it (%d → %d bytes)", len(big), len(got))
	}
	record("n2", s.fsm.Commands(), "new")
	got := s.compressEntry(big)
	if fsm.CmdType(got[0]) != fsm.CmdCompressed || len(got) >= len(big)/4 {
		t.Fatalf("every voter applies it: %d → %d bytes, type %d", len(big), len(got), got[0])
	}
	small := big[:fsm.CompressMin-1]
	if got := s.compressEntry(small); !bytes.Equal(got, small) {
		t.Fatal("an entry below CompressMin was compressed")
	}
}
