package bmcsim

import (
	"maps"
	"path"
	"slices"
	"strconv"
	"sync"
	"time"
)

// State is what GET /sim/state answers and Sim.State returns. Its first
// fields describe the first system and the first device taking CD or DVD.
type State struct {
	Index int    `json:"index"`
	Port  int    `json:"port"`
	MAC   string `json:"mac"`
	// Power is "On" or "Off".
	Power string `json:"power"`
	// BootOverride is the system's boot source override.
	BootOverride BootOverride `json:"bootOverride"`
	// LastBoot is the device the host last booted from ("" before any
	// power-on): a Once override is consumed by the power-on it applies to.
	LastBoot string `json:"lastBoot"`
	// Media is the first virtual media device taking CD or DVD (with the
	// default profile: Managers/1/VirtualMedia/CD1).
	Media Media `json:"media"`
	// BMCResets counts Manager.Reset calls.
	BMCResets int `json:"bmcResets"`
	// Fault is the active fault mode.
	Fault string `json:"fault"`
	// Sessions is the number of open Redfish sessions.
	Sessions int `json:"sessions"`
	// Mutations counts mutating calls answered 2xx.
	Mutations int `json:"mutations"`
	// Logins counts session logins accepted (how a test tells session
	// auth from HTTP Basic: logins are not audited).
	Logins int `json:"logins"`
	// Lockouts lists the accounts locked by failed logins since the
	// simulator started (a lock that has since expired included), and
	// FailedLogins counts refused logins of existing accounts by
	// "ACCOUNT USER-AGENT": whose stale password knocked at the BMC.
	Lockouts     []Lockout      `json:"lockouts,omitempty"`
	FailedLogins map[string]int `json:"failedLogins,omitempty"`
	// Connections counts TCP connections the BMC accepted; with TLS,
	// TLSHandshakes counts completed handshakes and TLSResumed those that
	// resumed an earlier session (no key exchange). How a test tells a
	// client that reuses connections from one that dials per request.
	Connections int `json:"connections"`
	// Requests counts Redfish requests (not /sim/ ones), answered or not.
	Requests      int `json:"requests"`
	TLSHandshakes int `json:"tlsHandshakes"`
	TLSResumed    int `json:"tlsResumed"`
	// Gets counts GET requests per path (trailing slash trimmed), answered
	// or not: how a test tells a client reading the same document twice.
	Gets map[string]int `json:"gets,omitempty"`
	// Calls counts the other Redfish requests by "METHOD path" (a
	// session's own path as "{id}"), answered or not.
	Calls map[string]int `json:"calls,omitempty"`
	// BytesOut counts the bytes of the Redfish answers' bodies.
	BytesOut int64 `json:"bytesOut"`
	// Systems is every ComputerSystem, in the profile's order (Power,
	// BootOverride and LastBoot above are Systems[0]'s).
	Systems []SystemState `json:"systems"`
	// VirtualMedia is every VirtualMedia device, sorted by path.
	VirtualMedia []MediaState `json:"virtualMedia"`
	// Day two (DESIGN.md, "Day two"): tasks oldest first, the firmware
	// inventory, BIOS, volumes and drives; Bricked after a power change
	// during a flash with Knobs.BrickOnPowerChange; SelfReboots counts
	// the BMC's own reboots (Knobs.RebootMinutes), Rebooting is true
	// while one lasts.
	Tasks       []TaskState     `json:"tasks,omitempty"`
	Firmware    []FirmwareState `json:"firmware,omitempty"`
	Bios        []BiosState     `json:"bios,omitempty"`
	Volumes     []VolumeState   `json:"volumes,omitempty"`
	Drives      []DriveState    `json:"drives,omitempty"`
	Bricked     bool            `json:"bricked,omitempty"`
	SelfReboots int             `json:"selfReboots,omitempty"`
	Rebooting   bool            `json:"rebooting,omitempty"`
	Knobs       Knobs           `json:"knobs"`
	// Events is the EventService (events.go); nil when the profile
	// offers none.
	Events *EventState `json:"events,omitempty"`
}

// BootOverride mirrors ComputerSystem.Boot.
type BootOverride struct {
	Target  string `json:"target"`  // None, Pxe, Hdd, Cd, BiosSetup, …
	Enabled string `json:"enabled"` // Disabled, Once, Continuous
	Mode    string `json:"mode"`    // UEFI, Legacy
	// HTTPBootURI is Boot.HttpBootUri (systems that have it).
	HTTPBootURI string `json:"httpBootUri,omitempty"`
}

// Media mirrors VirtualMedia CD1.
type Media struct {
	Image    string `json:"image"`
	Inserted bool   `json:"inserted"`
}

// SystemState is one ComputerSystem's state.
type SystemState struct {
	ID           string       `json:"id"`
	Path         string       `json:"path"`
	Power        string       `json:"power"`
	BootOverride BootOverride `json:"bootOverride"`
	LastBoot     string       `json:"lastBoot"`
	// NetBoot is the system's last boot from the network (UefiHttp or
	// Pxe): what it fetched; zero before any.
	NetBoot NetBoot `json:"netBoot,omitzero"`
}

// MediaState is one VirtualMedia device's state.
type MediaState struct {
	Path                 string `json:"path"`
	Image                string `json:"image"`
	Inserted             bool   `json:"inserted"`
	WriteProtected       bool   `json:"writeProtected"`
	TransferProtocolType string `json:"transferProtocolType,omitempty"`
	TransferMethod       string `json:"transferMethod,omitempty"`
	// Read and ReadError: with Config.FetchMedia, the bytes the BMC read
	// of the inserted image and why it could not ("" when it could).
	Read      int64  `json:"read,omitempty"`
	ReadError string `json:"readError,omitempty"`
}

// bmc is one simulated BMC. Small on purpose: 1,000 of them fit easily.
type bmc struct {
	index int
	port  int
	prof  *profile
	vars  vars

	mu        sync.Mutex
	sys       []sysState   // per profile system
	media     []mediaState // per profile virtual media device
	resets    int
	mutations int
	logins    int
	conns     int
	requests  int
	gets      map[string]int
	calls     map[string]int
	bytesOut  int64
	tlsFull   int
	tlsResume int
	fault     string
	faultCh   chan struct{} // closed when the fault changes (wakes hangs)
	sessions  []session     // oldest first
	nextSess  int
	pwGen     uint64 // the last password number given (account.gen)
	lockouts  []Lockout
	// failedLogins counts refused logins by "ACCOUNT USER-AGENT".
	failedLogins map[string]int

	// Day two: knobs, tasks, and the state of the day-two resources,
	// allocated on first use (nil: as the fixture says).
	sim         *Sim
	knobs       Knobs
	tasks       []*task
	nextTask    int
	rebooting   bool
	selfReboots int
	bricked     bool
	fw          []string // per profile firmware item: version, "" = fixture's
	bios        []biosState
	vols        []*volume
	nextVol     int
	erased      []int // per profile drive: completed secure erases

	// The account table (accounts.go), filled on first use; acctPol
	// overrides the policy (Sim.SetAccountPolicy, PUT /sim/accounts).
	accts   []*account
	acctPol *AccountPolicy

	// EventService (events.go): subscriptions, the delivery queue (nil
	// until the first delivery), SSE streams, counters.
	subs                                     []*subscription
	nextSub, nextEvent                       int
	evq                                      chan delivery
	sse                                      []chan []byte
	evSent, evFailed, evDropped, evForgotten int
}

// sysState is one system's state; gen is its ETag, bumped on every change.
type sysState struct {
	power    bool
	boot     BootOverride
	lastBoot string
	net      NetBoot
	gen      uint64
}

// mediaState is one virtual media device's state; gen is its ETag.
type mediaState struct {
	image         string
	inserted, wp  bool
	proto, method string
	gen           uint64
	read          int64  // FetchMedia: bytes read of image
	readErr       string // FetchMedia: why image could not be read
}

type session struct {
	id    string
	token string
	user  string // the account that logged in
	gen   uint64 // the number of the password it logged in with
}

func newBMC(i, port int, p *profile, prefix [4]byte, on bool) *bmc {
	b := &bmc{
		index: i, port: port, prof: p,
		vars:    vars{index: i, prefix: prefix},
		sys:     append([]sysState(nil), p.initSys...),
		media:   append([]mediaState(nil), p.initMed...),
		fault:   FaultNone,
		faultCh: make(chan struct{}),
	}
	for j := range b.sys {
		b.sys[j].power = on
	}
	return b
}

// etag formats a generation as a weak ETag.
func etag(gen uint64) string { return `W/"` + strconv.FormatUint(gen, 10) + `"` }

// systemMAC is system j's boot MAC.
func (b *bmc) systemMAC(j int) string {
	if j < 0 || j >= len(b.prof.fsys) {
		return ""
	}
	return b.vars.mustExpand(b.prof.fsys[j].BootMAC)
}

func (b *bmc) state() State {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(time.Now())
	st := State{Index: b.index, Port: b.port, MAC: b.systemMAC(0), BMCResets: b.resets, Fault: b.fault,
		Sessions: len(b.sessions), Mutations: b.mutations, Logins: b.logins, Lockouts: slices.Clone(b.lockouts), FailedLogins: maps.Clone(b.failedLogins),
		Connections: b.conns, Requests: b.requests, TLSHandshakes: b.tlsFull + b.tlsResume, TLSResumed: b.tlsResume,
		Gets: maps.Clone(b.gets), Calls: maps.Clone(b.calls), BytesOut: b.bytesOut}
	for j, s := range b.sys {
		r := b.prof.systems[j]
		st.Systems = append(st.Systems, SystemState{ID: path.Base(r.path), Path: r.path, Power: onOff(s.power),
			BootOverride: s.boot, LastBoot: s.lastBoot, NetBoot: s.net})
	}
	for k, m := range b.media {
		st.VirtualMedia = append(st.VirtualMedia, MediaState{Path: b.prof.media[k].path, Image: m.image, Inserted: m.inserted,
			WriteProtected: m.wp, TransferProtocolType: m.proto, TransferMethod: m.method, Read: m.read, ReadError: m.readErr})
	}
	b.dayTwoState(&st)
	st.Events = b.eventState()
	first := st.Systems[0]
	st.Power, st.BootOverride, st.LastBoot = first.Power, first.BootOverride, first.LastBoot
	if k := b.prof.cdMedia; k >= 0 {
		st.Media = Media{Image: b.media[k].image, Inserted: b.media[k].inserted}
	}
	return st
}

func onOff(on bool) string {
	if on {
		return "On"
	}
	return "Off"
}

// powerOn boots system j: a Once override is used and cleared, pending
// BIOS settings are applied and tasks waiting for a reset start; a
// bricked board stays off. b.mu held.
func (b *bmc) powerOn(j int) {
	s := &b.sys[j]
	if b.bricked {
		s.gen++
		return
	}
	now := time.Now()
	b.applyBios(j, now)
	if b.sim != nil {
		b.sim.startWaiting(b, j, now)
	}
	s.power = true
	dev := "Hdd"
	if s.boot.Enabled != "Disabled" && s.boot.Target != "None" {
		dev = s.boot.Target
	}
	if s.boot.Enabled == "Once" {
		s.boot.Enabled = "Disabled"
	}
	s.lastBoot = dev
	b.netBoot(j, dev)
	s.gen++
	b.powerEvent(j)
}

// powerOff turns system j off. b.mu held.
func (b *bmc) powerOff(j int) {
	was := b.sys[j].power
	b.sys[j].power = false
	b.sys[j].gen++
	if was {
		b.powerEvent(j)
	}
}

func (b *bmc) setFault(mode string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if mode == b.fault {
		return
	}
	b.fault = mode
	close(b.faultCh)
	b.faultCh = make(chan struct{})
}

// addSession stores a new session and returns it. b.mu held.
func (b *bmc) addSession(max int, token, user string, gen uint64) session {
	b.nextSess++
	s := session{id: strconv.Itoa(b.nextSess), token: token, user: user, gen: gen}
	b.sessions = append(b.sessions, s)
	if len(b.sessions) > max {
		b.sessions = append(b.sessions[:0], b.sessions[len(b.sessions)-max:]...)
	}
	return s
}

// sessionByToken returns the account of the live session token and the
// number of the password it logged in with, and whether there is one; a
// session of an account since disabled or deleted is refused. b.mu held.
func (b *bmc) sessionByToken(token string) (string, uint64, bool) {
	for _, s := range b.sessions {
		if s.token == token {
			a := b.accountNamed(s.user)
			return s.user, s.gen, a != nil && a.enabled
		}
	}
	return "", 0, false
}

// dropSession removes session id. b.mu held.
func (b *bmc) dropSession(id string) bool {
	for i, s := range b.sessions {
		if s.id == id {
			b.sessions = append(b.sessions[:i], b.sessions[i+1:]...)
			return true
		}
	}
	return false
}
