package bmcsim

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"time"
)

// Knobs steer the day-two resources of one BMC (tasks, firmware update,
// BIOS settings, storage): how fast simulated time runs and which faults
// a test wants. Config.Knobs sets every BMC's at start; Sim.SetKnobs or
// PUT /sim/knobs (a JSON object; the fields given replace those of the
// BMC's current knobs) change one BMC's later. A task takes the knobs in
// force when it starts: changing them never alters a task already running.
type Knobs struct {
	// Speed is how many simulated seconds pass per real second (default
	// 1): 300 runs a 15-minute flash in 3 s.
	Speed float64 `json:"speed,omitempty"`
	// UpdateMinutes is how long a firmware update runs, simulated
	// (default 15); EraseMinutes a Drive.SecureErase or a slow
	// Volume.Initialize (default 30); JobMinutes a volume created through
	// a task or a fast Volume.Initialize (default 1).
	UpdateMinutes float64 `json:"updateMinutes,omitempty"`
	EraseMinutes  float64 `json:"eraseMinutes,omitempty"`
	JobMinutes    float64 `json:"jobMinutes,omitempty"`
	// UpdateOutcome is how an update ends: "success" (default: the
	// inventory shows the new version), "fail" (TaskState Exception, old
	// version kept), "hang" (Running at HangPercent forever), "no-change"
	// (Completed and OK, but the old version stays: a flash that did
	// not take).
	UpdateOutcome string `json:"updateOutcome,omitempty"`
	// RebootMinutes, when > 0, makes the BMC reboot itself halfway
	// through an update for that long (simulated): its port refuses
	// connections, open connections are closed, sessions end.
	RebootMinutes float64 `json:"rebootMinutes,omitempty"`
	// BrickOnPowerChange: a ComputerSystem.Reset while an update runs
	// bricks the board (the task ends in Exception, the system reads
	// Critical and never powers on again). Without it the reset is only
	// recorded (AuditLine.UpdateRunning).
	BrickOnPowerChange bool `json:"brickOnPowerChange,omitempty"`
	// BiosRejects are BIOS attributes that do not take at the next reset
	// even when valid (reported in @Redfish.Settings.Messages).
	BiosRejects []string `json:"biosRejects,omitempty"`
	// PowerDelaySeconds, when > 0, makes a ComputerSystem.Reset take
	// effect that many real seconds after it was accepted (204), plus up to
	// PowerDelayJitterSeconds more (uniform): until then the system reads
	// its old PowerState, as real BMCs and sushy-tools (1–11 s) do.
	PowerDelaySeconds       float64 `json:"powerDelaySeconds,omitempty"`
	PowerDelayJitterSeconds float64 `json:"powerDelayJitterSeconds,omitempty"`
	// MediaReadFails: with Config.FetchMedia, the BMC accepts an insert
	// but never fetches the image (a BMC that cannot reach the media
	// server): MediaState.Read stays 0 and ReadError says why, as real
	// BMCs keep it to themselves while Redfish shows the medium inserted.
	MediaReadFails bool `json:"mediaReadFails,omitempty"`
	// Network boot (netboot.go). HTTPBootURIFault is how the BMC treats
	// a PATCH of Boot.HttpBootUri: "" takes it, "refuse" answers 400
	// (a URL the BMC will not use), "ignore" answers 204 but keeps the
	// old value (read-back shows it). PXEImageURL is what the site's
	// DHCP/PXE server would hand a host booting from Pxe: with
	// Config.FetchMedia such a boot reads it ("" : a PXE boot reads
	// nothing).
	HTTPBootURIFault string `json:"httpBootUriFault,omitempty"`
	PXEImageURL      string `json:"pxeImageUrl,omitempty"`
	// Health (health.go): faults the BMC reports in Status.Health and
	// its sensors.
	Health HealthKnobs `json:"health,omitzero"`
	// Events (events.go): faults of the EventService's delivery.
	Events EventKnobs `json:"events,omitzero"`
}

// powerDelay draws the delay of one accepted reset (0: applied at once).
func (k Knobs) powerDelay() time.Duration {
	if k.PowerDelaySeconds <= 0 && k.PowerDelayJitterSeconds <= 0 {
		return 0
	}
	return time.Duration((k.PowerDelaySeconds + rand.Float64()*k.PowerDelayJitterSeconds) * float64(time.Second))
}

// Update outcomes (Knobs.UpdateOutcome).
const (
	OutcomeSuccess  = "success"
	OutcomeFail     = "fail"
	OutcomeHang     = "hang"
	OutcomeNoChange = "no-change"
)

// HangPercent is where a hanging update stops.
const HangPercent = 50

// Defaults of Knobs.
const (
	DefaultUpdateMinutes = 15
	DefaultEraseMinutes  = 30
	DefaultJobMinutes    = 1
)

func (k Knobs) withDefaults() Knobs {
	if k.Speed == 0 {
		k.Speed = 1
	}
	if k.UpdateMinutes == 0 {
		k.UpdateMinutes = DefaultUpdateMinutes
	}
	if k.EraseMinutes == 0 {
		k.EraseMinutes = DefaultEraseMinutes
	}
	if k.JobMinutes == 0 {
		k.JobMinutes = DefaultJobMinutes
	}
	if k.UpdateOutcome == "" {
		k.UpdateOutcome = OutcomeSuccess
	}
	return k
}

// validate names the first bad field and what to use instead.
func (k Knobs) validate() error {
	for name, v := range map[string]float64{"speed": k.Speed, "updateMinutes": k.UpdateMinutes, "eraseMinutes": k.EraseMinutes,
		"jobMinutes": k.JobMinutes, "rebootMinutes": k.RebootMinutes,
		"powerDelaySeconds": k.PowerDelaySeconds, "powerDelayJitterSeconds": k.PowerDelayJitterSeconds} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: %s is %v; use a positive number (0 keeps the default)", ErrKnobs, name, v)
		}
	}
	if k.Events.Flood < 0 || k.Events.Flood > 1000 {
		return fmt.Errorf("%w: events.flood is %d; use 0..1000 extra copies per event", ErrKnobs, k.Events.Flood)
	}
	if err := k.validateNetBoot(); err != nil {
		return err
	}
	switch k.UpdateOutcome {
	case "", OutcomeSuccess, OutcomeFail, OutcomeHang, OutcomeNoChange:
	default:
		return fmt.Errorf("%w: updateOutcome %q; use success, fail, hang or no-change", ErrKnobs, k.UpdateOutcome)
	}
	return nil
}

// simDur is a simulated span in real time at speed.
func simDur(minutes, speed float64) time.Duration {
	return time.Duration(minutes * 60 / speed * float64(time.Second))
}

// SetKnobs replaces BMC i's knobs (zero fields take the defaults).
func (s *Sim) SetKnobs(i int, k Knobs) error {
	if err := k.validate(); err != nil {
		return err
	}
	b := s.bmcAt(i)
	if b == nil {
		return fmt.Errorf("%w: %d (have %d)", ErrIndex, i, len(s.bmcs))
	}
	b.mu.Lock()
	was := b.knobs.Health
	b.knobs = k.withDefaults()
	b.healthEvent(was, b.knobs.Health)
	b.mu.Unlock()
	return nil
}

// serveKnobs is GET and PUT /sim/knobs: PUT merges the fields given into
// the BMC's knobs and answers the result.
func (s *Sim) serveKnobs(w http.ResponseWriter, r *http.Request, b *bmc) {
	b.mu.Lock()
	cur := b.knobs
	b.mu.Unlock()
	if r.Method == http.MethodGet {
		writeJSON(w, http.StatusOK, cur, "")
		return
	}
	next := cur
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&next); err != nil {
		http.Error(w, "body must be a JSON object of knobs (speed, updateMinutes, eraseMinutes, jobMinutes, updateOutcome, rebootMinutes, brickOnPowerChange, biosRejects, powerDelaySeconds, powerDelayJitterSeconds, health, events): "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := next.validate(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	next = next.withDefaults()
	b.mu.Lock()
	was := b.knobs.Health
	b.knobs = next
	b.healthEvent(was, next.Health)
	b.mu.Unlock()
	writeJSON(w, http.StatusOK, next, "")
}
