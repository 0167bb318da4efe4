package fsm

import "github.com/rackfence/rackfence/shared/wire"

// statusPart is one part of a host status that a binary older than its
// body versions would drop (command_health.go, command_daytwo.go,
// command_driveserver.go): a report carrying it is written at those
// versions, and the leader leaves the part out until every voter applies
// them. One entry per part: the body version a report needs, what a
// status carrying it looks like and how to leave it out are said once,
// and StatusCmd/RackStatusCmd take them from here.
type statusPart struct {
	status, rack byte                                     // the CmdStatus and CmdRackStatus body versions
	has          func(st *wire.HostStatus) bool           // st carries the part
	without      func(st wire.HostStatus) wire.HostStatus // st without it (a copy: nothing st points to is changed)
}

// Newest first: a report is written at the version of the newest part it
// carries (each version includes the older parts).
var (
	partDriveServer = statusPart{StatusDriveServerVersion, RackStatusDriveServerVersion, hasDriveServer, withoutDriveServer}
	partDayTwo      = statusPart{StatusDayTwoVersion, RackStatusDayTwoVersion,
		func(st *wire.HostStatus) bool { return st != nil && st.DayTwo != nil },
		func(st wire.HostStatus) wire.HostStatus { st.DayTwo = nil; return st }}
	partHealth = statusPart{StatusHealthVersion, RackStatusHealthVersion,
		func(st *wire.HostStatus) bool { return st != nil && st.Health != nil },
		func(st wire.HostStatus) wire.HostStatus { st.Health = nil; return st }}
	statusParts = []statusPart{partDriveServer, partDayTwo, partHealth}
)

func (p statusPart) inStatus(c StatusCmd) bool { return p.has(&c.Report.Status) }

func (p statusPart) stripStatus(c StatusCmd) StatusCmd {
	if p.inStatus(c) {
		c.Report.Status = p.without(c.Report.Status)
	}
	return c
}

func (p statusPart) inRack(c RackStatusCmd) bool {
	for i := range c.Hosts {
		if p.has(c.Hosts[i].Status) {
			return true
		}
	}
	return false
}

// stripRack is c without the part in any host's status; c and the
// statuses it points to are not changed.
func (p statusPart) stripRack(c RackStatusCmd) RackStatusCmd {
	if !p.inRack(c) {
		return c
	}
	hs := make([]wire.RackHostReport, len(c.Hosts))
	copy(hs, c.Hosts)
	for i := range hs {
		if p.has(hs[i].Status) {
			st := p.without(*hs[i].Status)
			hs[i].Status = &st
		}
	}
	c.Hosts = hs
	return c
}

// StatusForm is c without every part whose CmdStatus body version
// supports says some voter does not apply: the form the leader writes.
func (c StatusCmd) StatusForm(supports func(CmdType, byte) bool) StatusCmd {
	for _, p := range statusParts {
		if p.inStatus(c) && !supports(CmdStatus, p.status) {
			c = p.stripStatus(c)
		}
	}
	return c
}

// PartsForm is c without every status part whose CmdRackStatus body
// version supports says some voter does not apply (createdIndex is the
// caller's: it is not a status part).
func (c RackStatusCmd) PartsForm(supports func(CmdType, byte) bool) RackStatusCmd {
	for _, p := range statusParts {
		if p.inRack(c) && !supports(CmdRackStatus, p.rack) {
			c = p.stripRack(c)
		}
	}
	return c
}
