// Package bmcsim is a Redfish BMC simulator: N BMCs on consecutive loopback
// ports in one process. Every BMC serves one profile: an embedded JSON
// fixture (profiles/NAME.json) of Redfish path → document, modelled on a
// published shape (bmclib's default, DMTF's mockups, HPE iLO, Dell iDRAC,
// OpenBMC, a blade enclosure, …), served by a generic engine that overlays
// each BMC's small state (power and boot per system, media per virtual
// media device, sessions) and dispatches mutations by action name or
// resource type. It checks sessions and basic auth, honours ETags on
// PATCH, injects faults on demand, and writes one audit JSON line per
// mutating call. Each fixture also holds the hand-written hardware and
// BMC details a correct Redfish reader must find (ExpectedHardware,
// ExpectedBMC). See DESIGN.md.
package bmcsim

import "time"

// Defaults of Config, and of rackfence-bmcsim's flags.
const (
	DefaultHost        = "127.0.0.1"
	DefaultUsername    = "admin"
	DefaultPassword    = "password"
	DefaultMACPrefix   = "52:54:00:00"
	DefaultMaxSessions = 32
	// DefaultBasePort is rackfence-bmcsim's --base-port (the library's
	// zero value picks a free range instead).
	DefaultBasePort = 9001
	// FetchMediaBytes is how much of an inserted image FetchMedia reads.
	FetchMediaBytes = 64 << 10
	// MaxHosts is the most BMCs one simulator serves.
	MaxHosts = 10000
)

// Config describes a simulator. The zero value plus Hosts is usable.
type Config struct {
	// Hosts is the number of BMCs (1 to MaxHosts).
	Hosts int
	// Host is the listen address of every BMC. Default 127.0.0.1.
	Host string
	// BasePort is the port of BMC 0; BMC i listens on BasePort+i. 0 picks a
	// free range.
	BasePort int
	// Latency is added to every Redfish request before it is answered
	// (not to /sim/*). Jitter adds a uniform random 0..Jitter on top.
	Latency time.Duration
	Jitter  time.Duration
	// AuditPath, when set, gets one JSON line per mutating Redfish call
	// (AuditLine: time, port, remote, userAgent, method, path,
	// body; plus status). Session login and logout are not audited: they
	// change nothing on the host, and a login body holds the password.
	AuditPath string
	// Username and Password every BMC accepts. Default admin / password.
	Username string
	Password string
	// MACPrefix is the first four bytes of each host's boot MAC; the last
	// two are the BMC's index: PREFIX:HH:LL. Default 52:54:00:00.
	MACPrefix string
	// PowerOn starts every host powered on (default off).
	PowerOn bool
	// TLS serves HTTPS with a self-signed certificate (clients must skip
	// verification: redfish:// with disableCertificateVerification).
	TLS bool
	// MaxSessions per BMC; the oldest session is dropped beyond it, as
	// real BMCs do. Default 32.
	MaxSessions int
	// FetchMedia makes every BMC read an inserted image as a BMC does
	// before it reports the medium: a Range GET of its first
	// FetchMediaBytes (the ISO's volume descriptors) once the insert is
	// accepted, its result in MediaState.Read/ReadError. Off: an image URL
	// is only recorded (most tests use URLs nobody serves).
	FetchMedia bool
	// Profile is the BMC shape every BMC serves: one of Profiles()
	// ("" = "default", the shape bmclib v2.3.0 expects). See DESIGN.md.
	Profile string
	// GracefulShutdownDelay is how long the simulated OS takes to power
	// off after a GracefulShutdown (0: at once); the system reads On
	// meanwhile. IgnoreGracefulShutdown makes the OS never obey it (a hung
	// OS: the caller's hard power-off fallback is what powers it off).
	GracefulShutdownDelay  time.Duration
	IgnoreGracefulShutdown bool
	// Knobs are every BMC's day-two knobs at start (speed of simulated
	// time, update outcome, faults); see Knobs and DESIGN.md ("Day two").
	Knobs Knobs
	// Accounts is every BMC's account policy (slots, password rules,
	// lockout); nil: the profile's (accounts.go, DESIGN.md "Accounts").
	Accounts *AccountPolicy
}

// Fault modes for PUT /sim/fault and Sim.SetFault.
const (
	FaultNone       = "none"
	FaultHTTP500    = "http500"
	FaultHang       = "hang"
	FaultRefuseAuth = "refuse-auth"
)

func (c Config) withDefaults() Config {
	if c.Host == "" {
		c.Host = DefaultHost
	}
	if c.Username == "" {
		c.Username = DefaultUsername
	}
	if c.Password == "" {
		c.Password = DefaultPassword
	}
	if c.MACPrefix == "" {
		c.MACPrefix = DefaultMACPrefix
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	return c
}
