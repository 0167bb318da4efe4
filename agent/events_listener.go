package agent

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// The event listener: BMCs POST Event documents to /events/HOST. An event
// changes something only when the host has a subscription of this
// session, the request carries its secret (eventSecretHeader) and its
// Context, and the document decodes; a record whose EventId was seen (at
// a timestamp not newer than the last) or whose timestamp is older than
// the last accepted is a replay. Everything else changes nothing and is
// counted by result (rackfence_agent_bmc_events_total).

// maxEventBody bounds an Event document.
const maxEventBody = 64 << 10

// Results of rackfence_agent_bmc_events_total.
const (
	evOK          = "ok"
	evTest        = "test"
	evBadSecret   = "bad-secret"
	evUnknownHost = "unknown-host"
	evReplayed    = "replayed"
	evMalformed   = "malformed"
	evNotHolder   = "not-holder"
	// evOtherSystem: new records all about another system of the host's
	// BMC (another blade of the enclosure): heard, no power read.
	evOtherSystem = "other-system"
)

// testMessageID is the MessageId of the test events the agent asks for.
const testMessageID = "Base.1.0.Success"

// eventDoc is what the agent reads of a Redfish Event document.
type eventDoc struct {
	Context string
	Events  []eventRecord
}

type eventRecord struct {
	EventID        string
	MessageID      string
	EventTimestamp time.Time // zero when the BMC sent none
	Origin         string
}

// errEvent: a body that is not an Event document.
var errEvent = errors.New("not a Redfish Event document")

// decodeEvent decodes an Event document: an object with a non-empty
// Events array whose records each have a MessageId (and, when given, an
// RFC 3339 EventTimestamp).
func decodeEvent(body []byte) (eventDoc, error) {
	var raw struct {
		Context string `json:"Context"`
		Events  []struct {
			EventID           string          `json:"EventId"`
			MessageID         string          `json:"MessageId"`
			EventTimestamp    string          `json:"EventTimestamp"`
			OriginOfCondition json.RawMessage `json:"OriginOfCondition"`
		} `json:"Events"`
	}
	var d eventDoc
	if err := json.Unmarshal(body, &raw); err != nil {
		return d, fmt.Errorf("%w: %v", errEvent, err)
	}
	if len(raw.Events) == 0 || len(raw.Events) > 64 {
		return d, fmt.Errorf("%w: Events has %d records (1 to 64)", errEvent, len(raw.Events))
	}
	d.Context = raw.Context
	for i, r := range raw.Events {
		if r.MessageID == "" || len(r.MessageID) > 256 || len(r.EventID) > 256 {
			return d, fmt.Errorf("%w: Events[%d]: MessageId missing or EventId/MessageId too long", errEvent, i)
		}
		rec := eventRecord{EventID: r.EventID, MessageID: r.MessageID}
		if r.EventTimestamp != "" {
			t, err := time.Parse(time.RFC3339, r.EventTimestamp)
			if err != nil {
				return d, fmt.Errorf("%w: Events[%d].EventTimestamp %q is not RFC 3339", errEvent, i, r.EventTimestamp)
			}
			rec.EventTimestamp = t
		}
		if len(r.OriginOfCondition) > 0 && string(r.OriginOfCondition) != "null" {
			var o struct {
				ID string `json:"@odata.id"`
			}
			if err := json.Unmarshal(r.OriginOfCondition, &o); err != nil {
				// A string URI (SubmitTestEvent's parameter, some BMCs).
				var s string
				if err := json.Unmarshal(r.OriginOfCondition, &s); err != nil {
					return d, fmt.Errorf("%w: Events[%d].OriginOfCondition is neither a link nor a URI", errEvent, i)
				}
				o.ID = s
			}
			rec.Origin = o.ID
		}
		d.Events = append(d.Events, rec)
	}
	return d, nil
}

// EventsHandler is the listener's handler (cmd/rackfence-agent serves it
// over HTTPS on --events-addr).
func (a *Agent) EventsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, code := a.receiveEvent(r)
		a.cfg.Metrics.events.received.WithLabelValues(res).Inc()
		if code == http.StatusNoContent {
			w.WriteHeader(code)
			return
		}
		http.Error(w, res, code)
	})
}

// receiveEvent checks and applies one POST; it returns the result counted
// and the status to answer.
func (a *Agent) receiveEvent(r *http.Request) (string, int) {
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, eventsPath) {
		return evMalformed, http.StatusMethodNotAllowed
	}
	name, err := url.PathUnescape(strings.TrimPrefix(r.URL.Path, eventsPath))
	if err != nil || name == "" {
		return evUnknownHost, http.StatusNotFound
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxEventBody+1))
	if err != nil || len(body) > maxEventBody {
		return evMalformed, http.StatusRequestEntityTooLarge
	}
	s := a.cur.Load()
	if s == nil {
		return evNotHolder, http.StatusServiceUnavailable
	}
	token := r.Header.Get(eventSecretHeader)
	var secret, evCtx string
	known := false
	s.events.mu.Lock()
	if e := s.events.hosts[name]; e != nil && e.secret != "" && !e.disarmed {
		known, secret, evCtx = true, e.secret, e.context
	}
	s.events.mu.Unlock()
	if !known {
		return evUnknownHost, http.StatusNotFound
	}
	if subtle.ConstantTimeCompare([]byte(token), []byte(secret)) != 1 {
		s.log.Warn("BMC event refused: wrong or missing secret", "host", name, "remote", r.RemoteAddr)
		return evBadSecret, http.StatusUnauthorized
	}
	doc, err := decodeEvent(body)
	if err != nil {
		s.log.Warn("BMC event refused: malformed", "host", name, "err", err.Error())
		return evMalformed, http.StatusBadRequest
	}
	if doc.Context != "" && doc.Context != evCtx {
		return evBadSecret, http.StatusUnauthorized
	}
	res := s.events.accept(name, doc, time.Now())
	if res == evOK {
		s.queue.add(name)
	}
	return res, http.StatusNoContent
}

// accept applies doc's records to name's record: evOK when some record is
// new, not a test event and not about another system of the BMC
// (events_origin.go; a power read is due), evOtherSystem when the new
// non-test records are all about other systems, evTest when only test
// events are new, evReplayed when none is new.
func (t *eventTracker) accept(name string, doc eventDoc, now time.Time) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.hosts[name]
	if e == nil {
		return evUnknownHost
	}
	fresh, real, other := 0, false, false
	for _, rec := range doc.Events {
		ts := rec.EventTimestamp
		seen := rec.EventID != "" && slices.Contains(e.seen, rec.EventID)
		if (!ts.IsZero() && ts.Before(e.lastTS)) || (seen && (ts.IsZero() || !ts.After(e.lastTS))) {
			e.replayed++
			continue
		}
		fresh++
		if !ts.IsZero() {
			e.lastTS = ts
		}
		if rec.EventID != "" {
			e.seen = append(e.seen, rec.EventID)
			if len(e.seen) > maxSeenIDs {
				e.seen = e.seen[len(e.seen)-maxSeenIDs:]
			}
		}
		switch {
		case rec.MessageID == testMessageID:
		case forOtherSystem(rec.Origin, e.system):
			other = true
		default:
			real = true
		}
	}
	if fresh == 0 {
		return evReplayed
	}
	e.received += fresh
	e.heard, e.confirmed = now, true
	if !real && other {
		return evOtherSystem
	}
	if !real {
		return evTest
	}
	e.powerDue = true
	return evOK
}
