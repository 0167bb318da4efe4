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

// withoutDriveServer is st without its config drive's server (a copy:
// the drive is copied too).
func withoutDriveServer(st wire.HostStatus) wire.HostStatus {
	cd := *st.ConfigDrive
	cd.Server = ""
	st.ConfigDrive = &cd
	return st
}

// hasDriveServer reports whether c's config drive names its server.
func (c StatusCmd) hasDriveServer() bool { return partDriveServer.inStatus(c) }

// WithoutDriveServer is c without its config drive's server. c is not
// changed.
func (c StatusCmd) WithoutDriveServer() StatusCmd { return partDriveServer.stripStatus(c) }

// hasDriveServer reports whether some host's config drive in c names its
// server.
func (c RackStatusCmd) hasDriveServer() bool { return partDriveServer.inRack(c) }

// WithoutDriveServer is c without any config drive's server. c is not
// changed.
func (c RackStatusCmd) WithoutDriveServer() RackStatusCmd { return partDriveServer.stripRack(c) }
