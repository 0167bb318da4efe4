package agent

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// eventFixture is an Agent with a running session holding one armed
// subscription for host h1 (secret "s1", context "ctx1").
func eventFixture(t *testing.T) (*Agent, *session) {
	t.Helper()
	a := &Agent{cfg: Config{Metrics: NewMetrics(), EventsURL: "https://agent"}}
	s := &session{a: a, events: newEventTracker(), queue: newQueue(), log: slog.New(slog.DiscardHandler)}
	a.cur.Store(s)
	s.events.with("h1", func(e *eventHost) { e.secret, e.context, e.armed = "s1", "ctx1", true })
	return a, s
}

func eventBody(id, msg string, ts time.Time) string {
	b, _ := json.Marshal(map[string]any{"Context": "ctx1", "Events": []map[string]any{{
		"EventId": id, "MessageId": msg, "EventTimestamp": ts.UTC().Format(time.RFC3339),
		"OriginOfCondition": map[string]string{"@odata.id": "/redfish/v1/Systems/1"}}}})
	return string(b)
}

func post(a *Agent, path, secret, body string) int {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	if secret != "" {
		req.Header.Set(eventSecretHeader, secret)
	}
	rec := httptest.NewRecorder()
	a.EventsHandler().ServeHTTP(rec, req)
	return rec.Code
}

// TestEventListenerChecks: only an event with the subscription's secret
// and context, for a known host, well formed and not seen before makes a
// power read due; every other is refused and counted by result.
func TestEventListenerChecks(t *testing.T) {
	a, s := eventFixture(t)
	t0 := time.Now().Add(-time.Minute).Truncate(time.Second)
	due := func() bool {
		var d bool
		s.events.with("h1", func(e *eventHost) { d = e.powerDue; e.powerDue = false })
		return d
	}
	cases := []struct {
		name, path, secret, body string
		code                     int
		result                   string
		due                      bool
	}{
		{"valid", "/events/h1", "s1", eventBody("1", "ResourceEvent.1.0.ResourceChanged", t0), 204, evOK, true},
		{"replayed (same id and time)", "/events/h1", "s1", eventBody("1", "ResourceEvent.1.0.ResourceChanged", t0), 204, evReplayed, false},
		{"older than the last", "/events/h1", "s1", eventBody("9", "ResourceEvent.1.0.ResourceChanged", t0.Add(-time.Second)), 204, evReplayed, false},
		{"no secret", "/events/h1", "", eventBody("2", "ResourceEvent.1.0.ResourceChanged", t0.Add(time.Second)), 401, evBadSecret, false},
		{"wrong secret", "/events/h1", "s2", eventBody("2", "ResourceEvent.1.0.ResourceChanged", t0.Add(time.Second)), 401, evBadSecret, false},
		{"wrong context", "/events/h1", "s1", strings.Replace(eventBody("2", "X.1.0.Y", t0.Add(time.Second)), "ctx1", "other", 1), 401, evBadSecret, false},
		{"unknown host", "/events/h2", "s1", eventBody("2", "ResourceEvent.1.0.ResourceChanged", t0.Add(time.Second)), 404, evUnknownHost, false},
		{"garbage", "/events/h1", "s1", "{\"Events\": [{\"EventId\": \xff\xfe", 400, evMalformed, false},
		{"no events", "/events/h1", "s1", `{"Context":"ctx1","Events":[]}`, 400, evMalformed, false},
		{"bad timestamp", "/events/h1", "s1", `{"Context":"ctx1","Events":[{"EventId":"3","MessageId":"A.1.0.B","EventTimestamp":"yesterday"}]}`, 400, evMalformed, false},
		{"too large", "/events/h1", "s1", `{"Context":"ctx1","x":"` + strings.Repeat("a", maxEventBody) + `"}`, 413, evMalformed, false},
		{"test event", "/events/h1", "s1", eventBody("4", testMessageID, t0.Add(2*time.Second)), 204, evTest, false},
		{"same second, new id", "/events/h1", "s1", eventBody("5", "ResourceEvent.1.0.ResourceChanged", t0.Add(2*time.Second)), 204, evOK, true},
	}
	for _, c := range cases {
		before := testutil.ToFloat64(a.cfg.Metrics.events.received.WithLabelValues(c.result))
		if code := post(a, c.path, c.secret, c.body); code != c.code {
			t.Errorf("%s: answered %d, want %d", c.name, code, c.code)
		}
		if got := testutil.ToFloat64(a.cfg.Metrics.events.received.WithLabelValues(c.result)) - before; got != 1 {
			t.Errorf("%s: counted %v as %s", c.name, got, c.result)
		}
		if d := due(); d != c.due {
			t.Errorf("%s: power read due %v, want %v", c.name, d, c.due)
		}
	}
	// A standby agent (no session) refuses every event.
	a.cur.Store(nil)
	if code := post(a, "/events/h1", "s1", eventBody("6", "A.1.0.B", time.Now())); code != http.StatusServiceUnavailable {
		t.Errorf("no session: %d", code)
	}
}

// TestEventForOtherBlade: two blades of one enclosure BMC each hold a
// subscription there, and the BMC posts every event to both. An event
// whose OriginOfCondition names one blade's system makes only that
// blade's power read due (the other counts it other-system, and hears it:
// the subscription works); one naming the chassis, or no origin, makes
// both due; a host whose address names no system takes every event.
func TestEventForOtherBlade(t *testing.T) {
	a, s := eventFixture(t)
	s.events.with("h1", func(e *eventHost) { e.system = systemOf("redfish+https://10.0.0.9/redfish/v1/Systems/Blade1") })
	s.events.with("h2", func(e *eventHost) {
		e.secret, e.context, e.armed = "s2", "ctx1", true
		e.system = systemOf("redfish+https://10.0.0.9/redfish/v1/Systems/Blade2")
	})
	s.events.with("h3", func(e *eventHost) { e.secret, e.context, e.armed = "s3", "ctx1", true })
	secrets := map[string]string{"h1": "s1", "h2": "s2", "h3": "s3"}
	t0 := time.Now().Add(-time.Minute).Truncate(time.Second)
	for i, c := range []struct {
		name   string
		origin any
		due    map[string]bool
	}{
		{"blade 2's system", map[string]string{"@odata.id": "/redfish/v1/Systems/Blade2"}, map[string]bool{"h2": true, "h3": true}},
		{"under blade 1's system, as a URI", "https://10.0.0.9/redfish/v1/Systems/Blade1/Processors/CPU0", map[string]bool{"h1": true, "h3": true}},
		{"the enclosure's chassis", map[string]string{"@odata.id": "/redfish/v1/Chassis/Enclosure"}, map[string]bool{"h1": true, "h2": true, "h3": true}},
		{"no origin", nil, map[string]bool{"h1": true, "h2": true, "h3": true}},
	} {
		b, _ := json.Marshal(map[string]any{"Context": "ctx1", "Events": []map[string]any{{"EventId": fmt.Sprint(i),
			"MessageId": "ResourceEvent.1.0.ResourceChanged", "EventTimestamp": t0.Add(time.Duration(i) * time.Second).Format(time.RFC3339),
			"OriginOfCondition": c.origin}}})
		for _, h := range []string{"h1", "h2", "h3"} {
			other := testutil.ToFloat64(a.cfg.Metrics.events.received.WithLabelValues(evOtherSystem))
			if code := post(a, "/events/"+h, secrets[h], string(b)); code != http.StatusNoContent {
				t.Fatalf("%s to %s: answered %d", c.name, h, code)
			}
			var due, heard bool
			s.events.with(h, func(e *eventHost) { due, heard = e.powerDue, e.confirmed; e.powerDue = false })
			if due != c.due[h] || !heard {
				t.Errorf("%s to %s: power read due %v, want %v (heard %v)", c.name, h, due, c.due[h], heard)
			}
			if n := testutil.ToFloat64(a.cfg.Metrics.events.received.WithLabelValues(evOtherSystem)) - other; (n == 1) == c.due[h] {
				t.Errorf("%s to %s: counted other-system %v times", c.name, h, n)
			}
		}
	}
	if got := systemOf("redfish://10.0.0.9"); got != "" {
		t.Errorf("an address without a system path names %q", got)
	}
}

// TestEventTrackerCounts: hosts by state for the gauge.
func TestEventTrackerCounts(t *testing.T) {
	tr := newEventTracker()
	tr.with("a", func(e *eventHost) { e.armed = true })
	tr.with("b", func(e *eventHost) { e.armed, e.reason = true, "silent" })
	tr.with("c", func(e *eventHost) { e.reason = "no EventService" })
	tr.with("d", func(e *eventHost) { e.disarmed = true })
	if c := tr.counts(); c[eventsLive] != 1 || c[eventsPolling] != 2 {
		t.Errorf("counts %v", c)
	}
}

// FuzzDecodeEvent: the decoder never panics, and what it accepts has
// 1..64 records, each with a MessageId.
func FuzzDecodeEvent(f *testing.F) {
	f.Add([]byte(eventBody("1", "ResourceEvent.1.0.ResourceChanged", time.Unix(1e9, 0))))
	f.Add([]byte(`{"Events":[{"MessageId":"A.1.0.B","OriginOfCondition":"/redfish/v1/Systems/1"}]}`))
	f.Add([]byte(`{"Events":[{"MessageId":"A.1.0.B","OriginOfCondition":null,"EventTimestamp":"2026-01-01T00:00:00+01:00"}]}`))
	f.Add([]byte("{\"Events\": [{\"EventId\": \xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := decodeEvent(b)
		if err != nil {
			return
		}
		if len(d.Events) == 0 || len(d.Events) > 64 {
			t.Fatalf("accepted %d records", len(d.Events))
		}
		for _, r := range d.Events {
			if r.MessageID == "" {
				t.Fatal("accepted a record without MessageId")
			}
		}
	})
}
