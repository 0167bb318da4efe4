package fsm

import "github.com/rackfence/rackfence/shared/wire"

// The artifact server of a host's config drive
// (wire.ConfigDriveStatus.Server) rides in status reports from these body
// versions on. A binary from before them would drop it, so the leader
// writes a report carrying it in them only once every voter applies them
// (coordinator/gate.go), and before that writes the report without it
// (WithoutDriveServer): the agent's next report brings it again.
const (
	// StatusDriveServerVersion (v5, CmdStatus) is the MessagePack body of
	// a per-host report whose config drive names its server (it may carry
	// health and dayTwo too: v5 includes v3 and v4).
	StatusDriveServerVersion = 5
	// RackStatusDriveServerVersion (v6, CmdRackStatus) is the body of a
	// rack report where some host's config drive names its server (v6
	// includes v3 to v5).
	RackStatusDriveServerVersion = 6
)

func hasDriveServer(st *wire.HostStatus) bool {
	return st != nil && st.ConfigDrive != nil && st.ConfigDrive.Server != ""
}

// withoutDriveServer is st without its config drive's server (a copy).
func withoutDriveServer(st wire.HostStatus) wire.HostStatus {
	cd := *st.ConfigDrive
	cd.Server = ""
	st.ConfigDrive = &cd
	return st
}

// HasDriveServer reports whether c's config drive names its server.
func (c StatusCmd) HasDriveServer() bool { return hasDriveServer(&c.Report.Status) }

// WithoutDriveServer is c without its config drive's server. c is not
// changed.
func (c StatusCmd) WithoutDriveServer() StatusCmd {
	if c.HasDriveServer() {
		c.Report.Status = withoutDriveServer(c.Report.Status)
	}
	return c
}

// HasDriveServer reports whether some host's config drive in c names its
// server.
func (c RackStatusCmd) HasDriveServer() bool {
	for i := range c.Hosts {
		if hasDriveServer(c.Hosts[i].Status) {
			return true
		}
	}
	return false
}

// WithoutDriveServer is c without any config drive's server. c is not
// changed.
func (c RackStatusCmd) WithoutDriveServer() RackStatusCmd {
	if !c.HasDriveServer() {
		return c
	}
	hs := make([]wire.RackHostReport, len(c.Hosts))
	copy(hs, c.Hosts)
	for i := range hs {
		if hasDriveServer(hs[i].Status) {
			st := withoutDriveServer(*hs[i].Status)
			hs[i].Status = &st
		}
	}
	c.Hosts = hs
	return c
}
