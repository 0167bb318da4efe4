package api

import (
	"fmt"
	"net"
	"time"
	"unicode/utf8"

	"github.com/rackfence/rackfence/shared/wire"
)

// Bounds of request fields.
const (
	MinLeaseTTL     = time.Second
	MaxLeaseTTL     = 5 * time.Minute
	DefaultLeaseTTL = 10 * time.Second
	maxHolder       = 253
	maxMessage      = 4096
	maxExtra        = 64
)

var opStatuses = []string{wire.OpOK, wire.OpDiscovered, wire.OpError, wire.OpDelayed, wire.OpDetached,
	wire.OpMaintenance, wire.OpRemoving, wire.OpAwaitingHandoff}

func oneOf(v string, set []string) bool {
	for _, s := range set {
		if s == v {
			return true
		}
	}
	return false
}

func fe(field, format string, a ...any) error {
	return &wire.FieldError{Field: field, Message: fmt.Sprintf(format, a...)}
}

// validateReport checks an agent's status report.
func validateReport(r *wire.StatusReport) error {
	if r.Epoch == 0 {
		return fe("epoch", "is required: the epoch of the rack lease the agent holds")
	}
	return validateReportBody(r)
}

// validateReportBody checks a status report's status, acks and events
// (not its epoch: a rack report's is checked once for all its hosts).
func validateReportBody(r *wire.StatusReport) error {
	st := &r.Status
	if st.ProvisioningState != "" && !oneOf(st.ProvisioningState, wire.ProvisioningStates) {
		return fe("status.provisioningState", "%q is not a provisioning state", st.ProvisioningState)
	}
	if st.OperationalStatus != "" && !oneOf(st.OperationalStatus, opStatuses) {
		return fe("status.operationalStatus", "%q is not an operational status", st.OperationalStatus)
	}
	if st.PowerState != "" && !oneOf(st.PowerState, wire.PowerStates) {
		return fe("status.powerState", "%q is not a power state: use on, off or unknown", st.PowerState)
	}
	if cd := st.ConfigDrive; cd != nil {
		switch {
		case cd.Server != "" && !artifactServerURL(cd.Server):
			return fe("status.configDrive.server", "%q is not an http or https URL with a host and no query: send the artifact server's base URL (rackfence-agent --artifact-url)", cd.Server)
		case cd.Size <= 0:
			return fe("status.configDrive.size", "is %d; a config drive has a positive size in bytes", cd.Size)
		case cd.PublishedAt.IsZero():
			return fe("status.configDrive.publishedAt", "is required: when the agent published the drive")
		case !cd.ReadAt.IsZero() && cd.ReadAt.Before(cd.PublishedAt):
			return fe("status.configDrive.readAt", "%s is before publishedAt %s: a drive is read after it is published",
				cd.ReadAt.Format(time.RFC3339), cd.PublishedAt.Format(time.RFC3339))
		}
	}
	if len(st.ErrorMessage) > maxMessage {
		return fe("status.errorMessage", "is %d bytes long; at most %d are allowed", len(st.ErrorMessage), maxMessage)
	}
	if st.ErrorCount < 0 {
		return fe("status.errorCount", "must not be negative")
	}
	if err := validateHealth(st.Health); err != nil {
		return err
	}
	if st.DayTwo != nil {
		if err := validateDayTwoStatus(st.DayTwo); err != nil {
			return err
		}
	}
	if len(st.Extra) > maxExtra {
		return fe("status.extra", "has %d keys; at most %d are allowed", len(st.Extra), maxExtra)
	}
	for i, a := range r.Acks {
		switch a.Kind {
		case wire.IntentDetach, wire.IntentDrain, wire.IntentResume, wire.IntentReboot, wire.IntentInspect, wire.IntentPowerOff, wire.IntentService:
		default:
			return fe(fmt.Sprintf("acks[%d].kind", i), "%q is not an intent: use detach, drain, resume, reboot, inspect, powerOff or service", a.Kind)
		}
		if a.CreatedIndex == 0 {
			return fe(fmt.Sprintf("acks[%d].createdIndex", i), "is required")
		}
	}
	if len(r.Events) > 100 {
		return fe("events", "has %d entries; at most 100 per report", len(r.Events))
	}
	for i, e := range r.Events {
		if e.Type != "" && e.Type != wire.EventNormal && e.Type != wire.EventWarning {
			return fe(fmt.Sprintf("events[%d].type", i), "%q is not an event type: use Normal or Warning", e.Type)
		}
		if e.Reason == "" {
			return fe(fmt.Sprintf("events[%d].reason", i), "is required")
		}
		if len(e.Message) > maxMessage {
			return fe(fmt.Sprintf("events[%d].message", i), "is %d bytes long; at most %d are allowed", len(e.Message), maxMessage)
		}
	}
	return nil
}

// validateLease checks a lease request; acquire needs a TTL (0 = default),
// renew and release an epoch.
func validateLease(r *wire.LeaseRequest, acquire bool) error {
	if r.Holder == "" {
		return fe("holder", "is required: the agent's ID")
	}
	if len(r.Holder) > maxHolder || !utf8.ValidString(r.Holder) {
		return fe("holder", "must be valid UTF-8 of at most %d bytes", maxHolder)
	}
	if acquire && r.TTL == 0 {
		r.TTL = wire.Duration(DefaultLeaseTTL)
	}
	if r.TTL != 0 && (r.TTL.D() < MinLeaseTTL || r.TTL.D() > MaxLeaseTTL) {
		return fe("ttl", "%s is outside %s..%s", r.TTL.D(), MinLeaseTTL, MaxLeaseTTL)
	}
	if !acquire && r.Epoch == 0 {
		return fe("epoch", "is required: the epoch the lease was granted under")
	}
	return nil
}

// validateCredentials checks a credentials body.
func validateCredentials(cr *wire.Credentials, name string) error {
	if cr.Name != "" && cr.Name != name {
		return fe("name", "%q does not match the name in the path (%q)", cr.Name, name)
	}
	if cr.Username == "" && (cr.Password != "" || len(cr.Data) == 0) {
		// A data-only record (user data, network data) needs no username.
		return fe("username", "is required with a password (a record holding only data may omit both)")
	}
	if len(cr.DataKeys) > 0 {
		return fe("dataKeys", "is read-only (the keys a GET lists): send the values in data")
	}
	if err := wire.ValidateCredentialsData(cr.Data); err != nil {
		return err
	}
	if len(cr.Username) > 256 {
		return fe("username", "is longer than 256 bytes")
	}
	if len(cr.Password) > 1024 {
		return fe("password", "is longer than 1024 bytes")
	}
	return nil
}

func splitHostPort(a string) (string, string, error) {
	h, p, err := net.SplitHostPort(a)
	if err == nil && (h == "" || p == "") {
		err = fmt.Errorf("empty host or port")
	}
	return h, p, err
}
