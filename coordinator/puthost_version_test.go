package coordinator

import (
	"errors"
	"maps"
	"testing"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// TestPutHostDataRefsNeedVersion3: a host naming config drive records is
// written as PutHost body version 3 (a binary from before those fields
// would drop them and diverge), one naming none stays version 2, both
// decode with every field, and the gate refuses version 3 while a voter
// runs a binary from before it.
func TestPutHostDataRefsNeedVersion3(t *testing.T) {
	plain := fsm.PutHostCmd{Host: wire.Host{Name: "h1", Rack: "r1"}}
	withData := fsm.PutHostCmd{Host: wire.Host{Name: "h2", Rack: "r1",
		UserData: &wire.SecretReference{Name: "ud"}, PreprovisioningNetworkData: &wire.SecretReference{Name: "pnd"}}}
	// A pivoted-in host carrying its operation history from the source.
	carried := fsm.PutHostCmd{Host: wire.Host{Name: "h3", Rack: "r1",
		Status: &wire.HostStatus{OperationHistory: &wire.OperationHistory{}}}}
	const putHostDataVersion = 3
	// A host with a day-two spec is version 4, the newest.
	dayTwo := fsm.PutHostCmd{Host: wire.Host{Name: "h4", Rack: "r1", RAID: &wire.RAIDSpec{KeepExisting: true}}}
	putHostDayTwoVersion := fsm.NewFSM().Commands()[fsm.CmdPutHost]
	for _, c := range []struct {
		cmd  fsm.PutHostCmd
		want byte
	}{{plain, fsm.BodyBinary}, {withData, putHostDataVersion}, {carried, putHostDataVersion}, {dayTwo, putHostDayTwoVersion}} {
		b, err := fsm.Encode(c.cmd)
		if err != nil {
			t.Fatal(err)
		}
		if b[0] != byte(fsm.CmdPutHost) || b[1] != c.want {
			t.Fatalf("%s encoded as type %d version %d, want version %d", c.cmd.Host.Name, b[0], b[1], c.want)
		}
		got, err := fsm.Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", c.cmd.Host.Name, err)
		}
		h := got.(fsm.PutHostCmd).Host
		if (h.UserData == nil) != (c.cmd.Host.UserData == nil) || (h.UserData != nil && h.UserData.Name != "ud") ||
			(h.PreprovisioningNetworkData != nil && h.PreprovisioningNetworkData.Name != "pnd") {
			t.Fatalf("%s decoded as %+v", c.cmd.Host.Name, h)
		}
	}

	s, _, record := gateStore(t, "n1", "n2")
	record("n1", s.fsm.Commands(), "new")
	// n2 never recorded a table: a binary from before the gate.
	b, _ := fsm.Encode(withData)
	if err := s.gate(b); !errors.Is(err, wire.ErrUpgradeRequired) {
		t.Fatalf("PutHost v3 with a legacy voter: %v", err)
	}
	b, _ = fsm.Encode(plain)
	if err := s.gate(b); err != nil {
		t.Fatalf("PutHost v2 with a legacy voter: %v", err)
	}
	// A voter whose binary reads PutHost v3 but not v4 (no day-two spec).
	v3 := maps.Clone(s.fsm.Commands())
	v3[fsm.CmdPutHost] = putHostDataVersion
	record("n2", v3, "data")
	if b, _ = fsm.Encode(withData); s.gate(b) != nil {
		t.Fatalf("PutHost v3 with a v3 voter: %v", s.gate(b))
	}
	if b, _ = fsm.Encode(dayTwo); !errors.Is(s.gate(b), wire.ErrUpgradeRequired) {
		t.Fatalf("PutHost v4 with a v3 voter: %v", s.gate(b))
	}
	record("n2", s.fsm.Commands(), "new")
	b, _ = fsm.Encode(withData)
	if err := s.gate(b); err != nil {
		t.Fatalf("PutHost v3, every voter upgraded: %v", err)
	}
}
