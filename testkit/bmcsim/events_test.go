package bmcsim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// receiver is an HTTPS event destination recording what it gets.
type receiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	got  []received
	wake chan struct{}
}

type received struct {
	header http.Header
	body   []byte
}

func newReceiver(t *testing.T) *receiver {
	rv := &receiver{wake: make(chan struct{}, 1024)}
	rv.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rv.mu.Lock()
		rv.got = append(rv.got, received{header: r.Header.Clone(), body: b})
		rv.mu.Unlock()
		rv.wake <- struct{}{}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rv.srv.Close)
	return rv
}

// waitN waits (60 s at most) until n deliveries arrived.
func (rv *receiver) waitN(t *testing.T, n int) []received {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		rv.mu.Lock()
		if len(rv.got) >= n {
			out := append([]received(nil), rv.got...)
			rv.mu.Unlock()
			return out
		}
		rv.mu.Unlock()
		select {
		case <-rv.wake:
		case <-deadline:
			t.Fatalf("%d event deliveries of %d after 60 s", len(rv.got), n)
		}
	}
}

func (rv *receiver) count() int {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return len(rv.got)
}

// rf sends a Redfish request to BMC i as admin (HTTP Basic).
func rf(t *testing.T, sim *Sim, method, pth string, body any) (int, map[string]any, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, sim.URL(0)+pth, rd)
	req.SetBasicAuth("admin", "password")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m, resp.Header
}

// TestEventServicePushesAndForgets: a subscription with a secret header
// gets a power change, a health change and a test event, as Event
// documents carrying the header; the header is never read back; a BMC
// reset forgets the subscription; DELETE removes one.
func TestEventServicePushesAndForgets(t *testing.T) {
	sim, err := Start(Config{Hosts: 1, Profile: "ilo", PowerOn: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	rv := newReceiver(t)
	code, root, _ := rf(t, sim, "GET", v1, nil)
	if code != 200 || odataID(root["EventService"]) != eventService {
		t.Fatalf("service root: %d EventService %v", code, root["EventService"])
	}
	code, es, _ := rf(t, sim, "GET", eventService, nil)
	if code != 200 || es["ServiceEnabled"] != true || es["ServerSentEventUri"] != nil {
		t.Fatalf("EventService: %d %v", code, es)
	}
	code, m, hdr := rf(t, sim, "POST", eventSubs, map[string]any{"Destination": rv.srv.URL + "/events/h1", "Context": "rackfence r1",
		"Protocol": "Redfish", "HttpHeaders": []map[string]string{{"X-Secret": "s3cret"}}, "RegistryPrefixes": []string{"ResourceEvent", "Base"}})
	if code != 201 || hdr.Get("Location") == "" {
		t.Fatalf("subscribe: %d %v", code, m)
	}
	loc := hdr.Get("Location")
	_, sub, _ := rf(t, sim, "GET", loc, nil)
	if b, _ := json.Marshal(sub); strings.Contains(string(b), "s3cret") || sub["Context"] != "rackfence r1" {
		t.Errorf("subscription read back: %s", b)
	}
	sys := sim.prof.systems[0].path
	if code, _, _ := rf(t, sim, "POST", sys+"/Actions/ComputerSystem.Reset", map[string]string{"ResetType": "ForceOff"}); code != 204 {
		t.Fatalf("reset: %d", code)
	}
	if err := sim.SetKnobs(0, Knobs{Health: HealthKnobs{PSUFailed: true}}); err != nil {
		t.Fatal(err)
	}
	if code, m, _ := rf(t, sim, "POST", eventTestPath, map[string]any{"MessageId": "Base.1.0.Success"}); code != 204 {
		t.Fatalf("test event: %d %v", code, m)
	}
	got := rv.waitN(t, 3)
	want := []string{MsgResourceChanged, MsgStatusCritical, "Base.1.0.Success"}
	for k, g := range got {
		if g.header.Get("X-Secret") != "s3cret" {
			t.Errorf("delivery %d: X-Secret %q", k, g.header.Get("X-Secret"))
		}
		var ev struct {
			Context string
			Events  []struct {
				EventId, MessageId, EventTimestamp string
				OriginOfCondition                  struct {
					ODataID string `json:"@odata.id"`
				}
			}
		}
		if err := json.Unmarshal(g.body, &ev); err != nil || len(ev.Events) != 1 {
			t.Fatalf("delivery %d: %v %s", k, err, g.body)
		}
		e := ev.Events[0]
		if ev.Context != "rackfence r1" || e.MessageId != want[k] || e.EventId == "" || e.EventTimestamp == "" {
			t.Errorf("delivery %d: %s", k, g.body)
		}
		if k < 2 && e.OriginOfCondition.ODataID != sys {
			t.Errorf("delivery %d: origin %q, want %s", k, e.OriginOfCondition.ODataID, sys)
		}
	}
	// A BMC reboot forgets it.
	mgr := ""
	for target, a := range sim.prof.actions {
		if a.name == "#Manager.Reset" {
			mgr = target
		}
	}
	if code, _, _ := rf(t, sim, "POST", mgr, map[string]string{"ResetType": "GracefulRestart"}); code != 204 {
		t.Fatalf("manager reset: %d", code)
	}
	if st := sim.State(0).Events; st == nil || len(st.Subscriptions) != 0 || st.Forgotten != 1 {
		t.Fatalf("after the BMC reset: %+v", st)
	}
	if code, _, _ := rf(t, sim, "GET", loc, nil); code != 404 {
		t.Errorf("a forgotten subscription reads %d", code)
	}
	// DELETE.
	_, _, hdr = rf(t, sim, "POST", eventSubs, map[string]any{"Destination": rv.srv.URL, "Protocol": "Redfish"})
	if code, _, _ := rf(t, sim, "DELETE", hdr.Get("Location"), nil); code != 204 {
		t.Errorf("delete: %d", code)
	}
	if code, _, _ := rf(t, sim, "DELETE", hdr.Get("Location"), nil); code != 404 {
		t.Errorf("second delete: %d", code)
	}
}

// TestEventServiceRefusesBadSubscriptions: a destination that is not
// https, a protocol other than Redfish, an unknown property.
func TestEventServiceRefusesBadSubscriptions(t *testing.T) {
	sim, err := Start(Config{Hosts: 1, Profile: "openbmc"})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	for _, body := range []map[string]any{
		{"Destination": "http://10.0.0.1/e", "Protocol": "Redfish"},
		{"Destination": "https://10.0.0.1/e", "Protocol": "SNMPv2c"},
		{"Destination": "https://10.0.0.1/e", "Protocol": "Redfish", "Secret": "x"},
		{"Protocol": "Redfish"},
	} {
		if code, m, _ := rf(t, sim, "POST", eventSubs, body); code != 400 {
			t.Errorf("%v: %d %v", body, code, m)
		}
	}
	if _, es, _ := rf(t, sim, "GET", eventService, nil); es["ServerSentEventUri"] != eventSSE {
		t.Errorf("openbmc offers SSE: %v", es["ServerSentEventUri"])
	}
}

// TestEventServiceMissingOnOlderProfiles: basic-only links no
// EventService and answers 404 under it.
func TestEventServiceMissingOnOlderProfiles(t *testing.T) {
	sim, err := Start(Config{Hosts: 1, Profile: "basic-only"})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	if _, root, _ := rf(t, sim, "GET", v1, nil); root["EventService"] != nil {
		t.Errorf("root links %v", root["EventService"])
	}
	if code, _, _ := rf(t, sim, "GET", eventService, nil); code != 404 {
		t.Errorf("EventService: %d", code)
	}
	if sim.State(0).Events != nil {
		t.Error("state shows an EventService")
	}
}

// TestEventKnobs: garbage bodies, a flood of copies, silence.
func TestEventKnobs(t *testing.T) {
	sim, err := Start(Config{Hosts: 1, PowerOn: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	rv := newReceiver(t)
	if code, _, _ := rf(t, sim, "POST", eventSubs, map[string]any{"Destination": rv.srv.URL, "Protocol": "Redfish"}); code != 201 {
		t.Fatal(code)
	}
	press := func(p string) {
		req, _ := http.NewRequest("POST", sim.URL(0)+"/sim/power", strings.NewReader(`{"power":"`+p+`"}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("/sim/power: %v %v", err, resp)
		}
		resp.Body.Close()
	}
	_ = sim.SetKnobs(0, Knobs{Events: EventKnobs{Garbage: true}})
	press("Off")
	if g := rv.waitN(t, 1)[0]; json.Valid(g.body) {
		t.Errorf("garbage knob sent JSON: %s", g.body)
	}
	_ = sim.SetKnobs(0, Knobs{Events: EventKnobs{Flood: 9}})
	press("On")
	got := rv.waitN(t, 11)
	ids := map[string]bool{}
	for _, g := range got[1:] {
		var ev struct{ Events []struct{ EventId string } }
		_ = json.Unmarshal(g.body, &ev)
		ids[ev.Events[0].EventId] = true
	}
	if len(ids) != 10 {
		t.Errorf("flood of 10: %d distinct ids", len(ids))
	}
	_ = sim.SetKnobs(0, Knobs{Events: EventKnobs{Silent: true}})
	press("Off")
	if st := sim.State(0).Events; st.Dropped != 1 || rv.count() != 11 {
		t.Errorf("silent: dropped %d, delivered %d", st.Dropped, rv.count())
	}
	if err := sim.SetKnobs(0, Knobs{Events: EventKnobs{Flood: -1}}); err == nil {
		t.Error("flood -1 taken")
	}
}
