package fsm

// Hardware health in a status report (wire.HostStatus.Health): a body
// carrying it is a version of its own, so a binary that predates the
// field refuses the entry (it stops) instead of dropping the field and
// holding a state that differs from its peers'. The leader writes such a
// body only once every voter applies it (Store.statusForm,
// Store.rackStatusForm); until then it writes the report without the
// health, which every binary applies alike. A report without health is
// written as before (v2, or v3 for a rack report naming createdIndexes).
const (
	// StatusHealthVersion (v3, CmdStatus) is the MessagePack body of a
	// host status carrying health.
	StatusHealthVersion = 3
	// RackStatusHealthVersion (v4, CmdRackStatus) is the MessagePack body
	// of a rack report where some host's status carries health; it names
	// createdIndexes as v3 does.
	RackStatusHealthVersion = 4
)

func (c StatusCmd) bodyVersion() byte {
	for _, p := range statusParts { // status_parts.go, newest first
		if p.inStatus(c) {
			return p.status
		}
	}
	return BodyBinary
}

// hasHealth reports whether c's status carries health (body version 3).
func (c StatusCmd) hasHealth() bool { return partHealth.inStatus(c) }

// WithoutHealth is c without the status' health (body version 2).
func (c StatusCmd) WithoutHealth() StatusCmd { return partHealth.stripStatus(c) }

// hasHealth reports whether some host's status in c carries health (body
// version 4).
func (c RackStatusCmd) hasHealth() bool { return partHealth.inRack(c) }

// WithoutHealth is c without any host's health; c is not changed.
func (c RackStatusCmd) WithoutHealth() RackStatusCmd { return partHealth.stripRack(c) }

// decodeStatus decodes a CmdStatus body of any version; one older than
// v3 carries no health (a leader writes health only from v3), one older
// than v4 no day-two status, one older than v5 no config drive server.
func decodeStatus(ver byte, body []byte) (Command, error) {
	c, err := decodeBody[StatusCmd](binBody, ver, body)
	if err != nil || ver >= StatusDriveServerVersion {
		return c, err
	}
	c = c.(StatusCmd).WithoutDriveServer()
	if ver >= StatusDayTwoVersion {
		return c, nil
	}
	c = c.(StatusCmd).WithoutDayTwo()
	if ver >= StatusHealthVersion {
		return c, nil
	}
	return c.(StatusCmd).WithoutHealth(), nil
}
