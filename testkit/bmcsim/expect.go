package bmcsim

import (
	"encoding/json"

	"github.com/rackfence/rackfence/shared/wire"
)

// The expectations are hand-written in each fixture (profile.systems[j].
// expect), not computed from its resources: they are what a correct
// Redfish reader must find, by the rules in DESIGN.md ("What a reader must
// find"). Placeholders are substituted for BMC i.

// ExpectedHardware is what inspecting BMC i's system j must find (the zero
// value for a bad index).
func (s *Sim) ExpectedHardware(i, j int) wire.HardwareDetails {
	var hw wire.HardwareDetails
	s.expect(i, j, func(f fixtureSystem) json.RawMessage { return f.Expect.Hardware }, &hw)
	return hw
}

// ExpectedBMC is what registering BMC i's system j must learn about the
// BMC (the zero value for a bad index).
func (s *Sim) ExpectedBMC(i, j int) wire.BMCDetails {
	var d wire.BMCDetails
	s.expect(i, j, func(f fixtureSystem) json.RawMessage { return f.Expect.BMC }, &d)
	return d
}

func (s *Sim) expect(i, j int, part func(fixtureSystem) json.RawMessage, into any) {
	b := s.bmcAt(i)
	if b == nil || j < 0 || j >= len(s.prof.fsys) {
		return
	}
	raw := part(s.prof.fsys[j])
	if len(raw) == 0 {
		return
	}
	// Checked at load (TestProfilesLoad); an error leaves into as it is.
	_ = json.Unmarshal([]byte(b.vars.mustExpand(string(raw))), into)
}
