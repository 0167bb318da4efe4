package bmcsim

import (
	"fmt"
	"strconv"
	"sync"
)

// State is what GET /sim/state answers and Sim.State returns.
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
	// Media is the virtual CD under Managers/1.
	Media Media `json:"media"`
	// BMCResets counts Manager.Reset calls.
	BMCResets int `json:"bmcResets"`
	// Fault is the active fault mode.
	Fault string `json:"fault"`
	// Sessions is the number of open Redfish sessions.
	Sessions int `json:"sessions"`
	// Mutations counts mutating calls answered 2xx.
	Mutations int `json:"mutations"`
}

// BootOverride mirrors ComputerSystem.Boot.
type BootOverride struct {
	Target  string `json:"target"`  // None, Pxe, Hdd, Cd, BiosSetup, …
	Enabled string `json:"enabled"` // Disabled, Once, Continuous
	Mode    string `json:"mode"`    // UEFI, Legacy
}

// Media mirrors VirtualMedia CD1.
type Media struct {
	Image    string `json:"image"`
	Inserted bool   `json:"inserted"`
}

// bmc is one simulated BMC. Small on purpose: 1,000 of them fit easily.
type bmc struct {
	index int
	port  int
	mac   string

	mu        sync.Mutex
	power     bool
	boot      BootOverride
	lastBoot  string
	media     Media
	resets    int
	mutations int
	gen       uint64 // bumped on every system change; the system ETag
	fault     string
	faultCh   chan struct{} // closed when the fault changes (wakes hangs)
	sessions  []session     // oldest first
	nextSess  int
}

type session struct {
	id    string
	token string
}

func newBMC(i, port int, prefix string, on bool) *bmc {
	return &bmc{
		index: i, port: port,
		mac:     fmt.Sprintf("%s:%02x:%02x", prefix, (i>>8)&0xff, i&0xff),
		power:   on,
		boot:    BootOverride{Target: "None", Enabled: "Disabled", Mode: "UEFI"},
		fault:   FaultNone,
		faultCh: make(chan struct{}),
	}
}

// etag is the system's current ETag. b.mu held.
func (b *bmc) etag() string { return `W/"` + strconv.FormatUint(b.gen, 10) + `"` }

func (b *bmc) state() State {
	b.mu.Lock()
	defer b.mu.Unlock()
	return State{Index: b.index, Port: b.port, MAC: b.mac, Power: onOff(b.power), BootOverride: b.boot,
		LastBoot: b.lastBoot, Media: b.media, BMCResets: b.resets, Fault: b.fault,
		Sessions: len(b.sessions), Mutations: b.mutations}
}

func onOff(on bool) string {
	if on {
		return "On"
	}
	return "Off"
}

// powerOn boots the host: a Once override is used and cleared. b.mu held.
func (b *bmc) powerOn() {
	b.power = true
	dev := "Hdd"
	if b.boot.Enabled != "Disabled" && b.boot.Target != "None" {
		dev = b.boot.Target
	}
	if b.boot.Enabled == "Once" {
		b.boot.Enabled = "Disabled"
	}
	b.lastBoot = dev
	b.gen++
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
func (b *bmc) addSession(max int, token string) session {
	b.nextSess++
	s := session{id: strconv.Itoa(b.nextSess), token: token}
	b.sessions = append(b.sessions, s)
	if len(b.sessions) > max {
		b.sessions = append(b.sessions[:0], b.sessions[len(b.sessions)-max:]...)
	}
	return s
}

// sessionByToken reports whether token is a live session. b.mu held.
func (b *bmc) sessionByToken(token string) bool {
	for _, s := range b.sessions {
		if s.token == token {
			return true
		}
	}
	return false
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
