package bmcsim

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Event delivery: emit (b.mu held) puts one Event document per matching
// subscription on the BMC's delivery queue; one goroutine per BMC posts
// them in order, retrying DeliveryRetryAttempts times a second apart, as
// a BMC does. The destination's certificate is not verified (Redfish
// VerifyCertificate defaults to false, and BMCs ship that way).

// Registry message ids the simulator sends.
const (
	MsgResourceChanged  = "ResourceEvent.1.0.ResourceChanged"
	MsgStatusCritical   = "ResourceEvent.1.0.ResourceStatusChangedCritical"
	MsgStatusWarning    = "ResourceEvent.1.0.ResourceStatusChangedWarning"
	MsgStatusOK         = "ResourceEvent.1.0.ResourceStatusChangedOK"
	eventQueueLen       = 1024
	eventDeliverTimeout = 5 * time.Second
)

// simEvent is one record of an Event document's Events array.
type simEvent struct {
	msgID, msg, severity, origin string
	test                         bool
}

// delivery is one POST to one subscription.
type delivery struct {
	dest    string
	headers map[string]string
	body    []byte
}

var eventClient = &http.Client{Timeout: eventDeliverTimeout, Transport: &http.Transport{
	// A BMC does not verify the destination unless told (VerifyCertificate).
	TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // as BMCs ship
	MaxIdleConnsPerHost: 2,
}}

// emit sends ev to every subscription that takes it, and to SSE streams.
// b.mu held.
func (b *bmc) emit(ev simEvent) {
	if !b.prof.events().push || b.sim == nil || (len(b.subs) == 0 && len(b.sse) == 0) {
		return
	}
	copies := 1 + max(0, b.knobs.Events.Flood)
	for range copies {
		b.nextEvent++
		id := strconv.Itoa(b.nextEvent)
		for _, x := range b.subs {
			if !ev.test && len(x.prefixes) > 0 && !containsPrefix(x.prefixes, ev.msgID) {
				continue
			}
			if b.knobs.Events.Silent {
				b.evDropped++
				continue
			}
			body := eventDoc(id, x.context, ev)
			if b.knobs.Events.Garbage {
				body = append([]byte(`{"Events": [{"EventId": `), 0xff, 0xfe, '\n')
			}
			b.enqueue(delivery{dest: x.dest, headers: x.headers, body: body})
			if b.knobs.Events.Replay {
				b.enqueue(delivery{dest: x.dest, headers: x.headers, body: body})
			}
		}
		if !b.knobs.Events.Silent {
			for _, ch := range b.sse {
				select {
				case ch <- sseFrame(id, eventDoc(id, "", ev)):
				default:
				}
			}
		}
	}
}

func containsPrefix(prefixes []string, msgID string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(msgID, p+".") {
			return true
		}
	}
	return false
}

// eventDoc is an Event document holding one event record.
func eventDoc(id, context string, ev simEvent) []byte {
	sev := ev.severity
	if sev == "" {
		sev = "OK"
	}
	rec := doc{"EventId": id, "EventTimestamp": time.Now().UTC().Format(time.RFC3339), "EventType": "Alert",
		"Severity": sev, "MessageSeverity": sev, "Message": ev.msg, "MessageId": ev.msgID, "MessageArgs": []string{}}
	if ev.origin != "" {
		rec["OriginOfCondition"] = doc{"@odata.id": ev.origin}
	}
	out, _ := json.Marshal(doc{"@odata.type": "#Event.v1_7_0.Event", "Id": id, "Name": "Event Array",
		"Context": context, "Events": []doc{rec}})
	return out
}

// enqueue puts d on b's delivery queue, starting its sender on first use.
// b.mu held.
func (b *bmc) enqueue(d delivery) {
	if b.evq == nil {
		b.evq = make(chan delivery, eventQueueLen)
		go b.sim.sendEvents(b, b.evq)
	}
	select {
	case b.evq <- d:
	default:
		b.evDropped++
	}
}

// sendEvents posts b's deliveries in order until the simulator stops.
func (s *Sim) sendEvents(b *bmc, q <-chan delivery) {
	for {
		select {
		case <-s.done:
			return
		case d := <-q:
			b.mu.Lock()
			tries := 1 + b.prof.events().retry
			b.mu.Unlock()
			ok := false
			for i := 0; i < tries && !ok; i++ {
				if i > 0 {
					select {
					case <-s.done:
						return
					case <-time.After(time.Second):
					}
				}
				ok = post(d)
			}
			b.mu.Lock()
			if ok {
				b.evSent++
			} else {
				b.evFailed++
			}
			b.mu.Unlock()
		}
	}
}

func post(d delivery) bool {
	ctx, cancel := context.WithTimeout(context.Background(), eventDeliverTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.dest, bytes.NewReader(d.body))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range d.headers {
		req.Header.Set(k, v)
	}
	resp, err := eventClient.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	return resp.StatusCode/100 == 2
}

// powerEvent announces system j's new power state. b.mu held.
func (b *bmc) powerEvent(j int) {
	pth := b.prof.systems[j].path
	b.emit(simEvent{msgID: MsgResourceChanged, origin: pth,
		msg: "The power state of " + pth + " changed to " + onOff(b.sys[j].power) + "."})
}

// healthEvent announces a change of the health knobs' rollup. b.mu held.
func (b *bmc) healthEvent(was, now HealthKnobs) {
	if was.rollup() == now.rollup() {
		return
	}
	id, sev := MsgStatusOK, "OK"
	switch now.rollup() {
	case "Critical":
		id, sev = MsgStatusCritical, "Critical"
	case "Warning":
		id, sev = MsgStatusWarning, "Warning"
	}
	for _, r := range b.prof.systems {
		b.emit(simEvent{msgID: id, severity: sev, origin: r.path, msg: "The health of " + r.path + " changed to " + sev + "."})
	}
}

// submitTestEvent is #EventService.SubmitTestEvent: MessageId is required;
// the event goes to every subscription whatever its filters.
func (s *Sim) submitTestEvent(w http.ResponseWriter, b *bmc, body []byte) {
	var req struct {
		MessageId, Message, Severity string //nolint:revive // Redfish names
		OriginOfCondition            string
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "Base.1.0.MalformedJSON", "the body must be a JSON object: "+err.Error())
		return
	}
	if req.MessageId == "" {
		writeErrorRelated(w, http.StatusBadRequest, "Base.1.0.ActionParameterMissing", "SubmitTestEvent needs MessageId", "#/MessageId")
		return
	}
	b.mu.Lock()
	b.emit(simEvent{msgID: req.MessageId, msg: req.Message, severity: req.Severity, origin: req.OriginOfCondition, test: true})
	b.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func sseFrame(id string, body []byte) []byte {
	return []byte("id: " + id + "\ndata: " + string(body) + "\n\n")
}

// serveSSE streams events (text/event-stream) until the client leaves.
func (s *Sim) serveSSE(w http.ResponseWriter, r *http.Request, b *bmc) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "Base.1.0.InternalError", "streaming not supported here")
		return
	}
	ch := make(chan []byte, 64)
	b.mu.Lock()
	b.sse = append(b.sse, ch)
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		for k, c := range b.sse {
			if c == ch {
				b.sse = append(b.sse[:k], b.sse[k+1:]...)
				break
			}
		}
		b.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		case f := <-ch:
			if _, err := w.Write(f); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

// serveSimPower is POST /sim/power {"system": 0, "power": "On"|"Off"}:
// the host's power changed at the machine (its button, a PDU), not
// through Redfish; the BMC reads it and sends its event.
func (s *Sim) serveSimPower(w http.ResponseWriter, r *http.Request, b *bmc) {
	var req struct {
		System int    `json:"system"`
		Power  string `json:"power"`
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 4096))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || (req.Power != "On" && req.Power != "Off") {
		http.Error(w, fmt.Sprintf(`body must be {"system": N, "power": "On"|"Off"} (%v)`, err), http.StatusBadRequest)
		return
	}
	if req.System < 0 || req.System >= len(b.prof.systems) {
		http.Error(w, fmt.Sprintf("system %d: this BMC has %d (0..%d)", req.System, len(b.prof.systems), len(b.prof.systems)-1), http.StatusBadRequest)
		return
	}
	b.mu.Lock()
	if req.Power == "On" {
		b.powerOn(req.System)
	} else {
		b.powerOff(req.System)
	}
	b.mu.Unlock()
	writeJSON(w, http.StatusOK, b.state(), "")
}
