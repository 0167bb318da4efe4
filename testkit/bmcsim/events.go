package bmcsim

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Redfish EventService (DMTF EventService, EventDestination and Event
// schemas): a BMC whose profile offers it serves /redfish/v1/EventService,
// takes subscriptions (push over HTTPS to a Destination, with HttpHeaders
// it sends along and never reads back), and pushes an Event document to
// each on a power change of a system and on a health knob change
// (events_push.go); SubmitTestEvent pushes a test event to every
// subscription. A BMC reboot (Manager.Reset, or Knobs.RebootMinutes) forgets
// every subscription, as real BMCs may. Profiles with none (basic-only,
// no-powerstate) answer 404 there and the service root links none.

const (
	eventService  = v1 + "/EventService"
	eventSubs     = eventService + "/Subscriptions"
	eventSSE      = eventService + "/SSE"
	eventTestPath = eventService + "/Actions/EventService.SubmitTestEvent"
	// maxSubscriptions is how many subscriptions one BMC keeps (iDRAC: 8,
	// iLO: 20 at most); a POST beyond answers 503 as they do.
	maxSubscriptions = 8
)

// eventOffer is what a profile's EventService offers.
type eventOffer struct {
	push  bool // EventService with push subscriptions
	sse   bool // ServerSentEventUri as well (OpenBMC's bmcweb)
	retry int  // DeliveryRetryAttempts
}

// eventOffers is the EventService per profile: iLO and iDRAC push,
// OpenBMC pushes and streams (SSE); an HTTP-Basic-only BMC and one that
// reports no power state are older services without an EventService, so
// the agent's fall-back to polling is exercised.
var eventOffers = map[string]eventOffer{
	"default":             {push: true, retry: 3},
	"ilo":                 {push: true, retry: 3},
	"idrac":               {push: true, retry: 3},
	"openbmc":             {push: true, sse: true, retry: 3},
	"tower":               {push: true, retry: 3},
	"blade":               {push: true, retry: 3},
	"no-vmedia":           {push: true, retry: 3},
	"system-vmedia-patch": {push: true, retry: 3},
}

// EventKnobs are faults of a BMC's event delivery (Knobs.Events).
type EventKnobs struct {
	// Garbage: every delivery's body is not an Event document (bytes that
	// are not JSON).
	Garbage bool `json:"garbage,omitempty"`
	// Flood: every event is sent that many extra times, each copy with
	// a new EventId (an event storm).
	Flood int `json:"flood,omitempty"`
	// Replay: every delivery is sent twice, byte for byte (a replayed
	// event, as an attacker on the path would send it).
	Replay bool `json:"replay,omitempty"`
	// Silent: subscriptions are taken and listed but nothing is ever
	// delivered, test events included (a BMC whose event stream stopped).
	Silent bool `json:"silent,omitempty"`
}

// subscription is one EventDestination.
type subscription struct {
	id, dest, context string
	headers           map[string]string
	prefixes, types   []string
	created           time.Time
}

// EventState is the EventService's state as /sim/state shows it.
type EventState struct {
	// Subscriptions lists the live subscriptions (never their headers).
	Subscriptions []SubscriptionState `json:"subscriptions"`
	// Sent counts deliveries answered 2xx, Failed those that were not
	// (after the retries), Dropped events the service did not send
	// (Silent); Forgotten counts subscriptions a BMC reboot dropped.
	Sent      int `json:"sent"`
	Failed    int `json:"failed"`
	Dropped   int `json:"dropped"`
	Forgotten int `json:"forgotten"`
}

// SubscriptionState is one subscription as /sim/state shows it.
type SubscriptionState struct {
	ID          string `json:"id"`
	Destination string `json:"destination"`
	Context     string `json:"context"`
}

func (p *profile) events() eventOffer { return eventOffers[p.name] }

func isEventPath(p string) bool {
	return p == eventService || strings.HasPrefix(p, eventService+"/")
}

// rootWithEvents adds the EventService link to a service root document.
func rootWithEvents(p *profile, body []byte) []byte {
	if !p.events().push {
		return body
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return body
	}
	m["EventService"] = doc{"@odata.id": eventService}
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return out
}

// serveEvents answers every request under /redfish/v1/EventService by an
// authenticated user.
func (s *Sim) serveEvents(w http.ResponseWriter, r *http.Request, b *bmc, pth string, body []byte) {
	off := b.prof.events()
	if !off.push {
		writeError(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", "no EventService on this BMC: poll it")
		return
	}
	get := r.Method == http.MethodGet || r.Method == http.MethodHead
	switch {
	case pth == eventService && get:
		writeJSON(w, http.StatusOK, b.eventServiceDoc(off), "")
	case pth == eventService && r.Method == http.MethodPatch:
		writeError(w, http.StatusMethodNotAllowed, "Base.1.0.OperationNotAllowed", "the simulated EventService's settings are read-only")
	case pth == eventSubs && get:
		b.mu.Lock()
		members := make([]doc, 0, len(b.subs))
		for _, x := range b.subs {
			members = append(members, doc{"@odata.id": eventSubs + "/" + x.id})
		}
		b.mu.Unlock()
		writeJSON(w, http.StatusOK, doc{"@odata.id": eventSubs, "@odata.type": "#EventDestinationCollection.EventDestinationCollection",
			"Name": "Event Subscriptions", "Members": members, "Members@odata.count": len(members)}, "")
	case pth == eventSubs && r.Method == http.MethodPost:
		s.subscribe(w, b, body)
	case pth == eventTestPath && r.Method == http.MethodPost:
		s.submitTestEvent(w, b, body)
	case pth == eventSSE && off.sse && r.Method == http.MethodGet:
		s.serveSSE(w, r, b)
	case strings.HasPrefix(pth, eventSubs+"/"):
		id := strings.TrimPrefix(pth, eventSubs+"/")
		b.mu.Lock()
		k := b.subIndex(id)
		var sub subscription
		if k >= 0 {
			sub = *b.subs[k]
			if r.Method == http.MethodDelete {
				b.subs = append(b.subs[:k], b.subs[k+1:]...)
				b.mutations++
			}
		}
		b.mu.Unlock()
		switch {
		case k < 0:
			writeError(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", "no subscription at "+pth)
		case get:
			writeJSON(w, http.StatusOK, subscriptionDoc(&sub), "")
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		default:
			writeError(w, http.StatusMethodNotAllowed, "Base.1.0.OperationNotAllowed", r.Method+" is not allowed on "+pth)
		}
	default:
		writeError(w, http.StatusNotFound, "Base.1.0.ResourceMissingAtURI", "no resource at "+pth)
	}
}

func (b *bmc) eventServiceDoc(off eventOffer) doc {
	d := doc{
		"@odata.id": eventService, "@odata.type": "#EventService.v1_7_0.EventService", "Id": "EventService",
		"Name": "Event Service", "ServiceEnabled": true, "DeliveryRetryAttempts": off.retry,
		"DeliveryRetryIntervalSeconds": 1,
		"EventTypesForSubscription":    []string{"Alert", "StatusChange", "ResourceUpdated"},
		"RegistryPrefixes":             []string{"Base", "ResourceEvent"},
		"ResourceTypes":                []string{"ComputerSystem", "Chassis", "Power", "Thermal"},
		"Status":                       doc{"State": "Enabled", "Health": "OK"},
		"Subscriptions":                doc{"@odata.id": eventSubs},
		"Actions": doc{"#EventService.SubmitTestEvent": doc{"target": eventTestPath,
			"EventType@Redfish.AllowableValues": []string{"Alert", "StatusChange", "ResourceUpdated"}}},
	}
	if off.sse {
		d["ServerSentEventUri"] = eventSSE
	}
	return d
}

// subscriptionDoc is an EventDestination as a GET answers it: HttpHeaders
// is write-only (the schema: null or empty on a read).
func subscriptionDoc(x *subscription) doc {
	d := doc{"@odata.id": eventSubs + "/" + x.id, "@odata.type": "#EventDestination.v1_9_0.EventDestination",
		"Id": x.id, "Name": "Event Subscription " + x.id, "Destination": x.dest, "Context": x.context,
		"Protocol": "Redfish", "SubscriptionType": "RedfishEvent", "HttpHeaders": []any{},
		"EventFormatType": "Event", "DeliveryRetryPolicy": "RetryForever",
		"Status": doc{"State": "Enabled", "Health": "OK"}}
	if x.prefixes != nil {
		d["RegistryPrefixes"] = x.prefixes
	}
	if x.types != nil {
		d["ResourceTypes"] = x.types
	}
	return d
}

// subscribe is POST Subscriptions: Destination (https) and Protocol
// Redfish are required; HttpHeaders is an array of objects of header
// names and values.
func (s *Sim) subscribe(w http.ResponseWriter, b *bmc, body []byte) {
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "Base.1.0.MalformedJSON", "the body must be a JSON object: "+err.Error())
		return
	}
	known := map[string]bool{"Destination": true, "Context": true, "Protocol": true, "HttpHeaders": true, "RegistryPrefixes": true,
		"ResourceTypes": true, "EventTypes": true, "SubscriptionType": true, "EventFormatType": true, "DeliveryRetryPolicy": true,
		"MessageIds": true, "OriginResources": true, "VerifyCertificate": true}
	for k := range req {
		if !known[k] {
			writeErrorRelated(w, http.StatusBadRequest, "Base.1.0.PropertyUnknown", "the property "+k+" is not in the EventDestination schema", "#/"+k)
			return
		}
	}
	var x subscription
	var proto string
	var hdrs []map[string]string
	for k, dst := range map[string]any{"Destination": &x.dest, "Context": &x.context, "Protocol": &proto, "HttpHeaders": &hdrs,
		"RegistryPrefixes": &x.prefixes, "ResourceTypes": &x.types} {
		if raw, ok := req[k]; ok {
			if err := json.Unmarshal(raw, dst); err != nil {
				writeErrorRelated(w, http.StatusBadRequest, "Base.1.0.PropertyValueTypeError", k+": "+err.Error(), "#/"+k)
				return
			}
		}
	}
	u, err := url.Parse(x.dest)
	if x.dest == "" || err != nil || u.Scheme != "https" || u.Host == "" {
		writeErrorRelated(w, http.StatusBadRequest, "Base.1.0.PropertyValueFormatError",
			"Destination "+strconv.Quote(x.dest)+" must be an https:// URL", "#/Destination")
		return
	}
	if proto != "Redfish" {
		writeErrorRelated(w, http.StatusBadRequest, "Base.1.0.PropertyValueNotInList", "Protocol must be Redfish", "#/Protocol")
		return
	}
	x.headers = map[string]string{}
	for _, h := range hdrs {
		for k, v := range h {
			x.headers[k] = v
		}
	}
	b.mu.Lock()
	if len(b.subs) >= maxSubscriptions {
		b.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, "Base.1.0.CreateLimitReachedForResource", "this BMC keeps "+strconv.Itoa(maxSubscriptions)+" subscriptions: delete one first")
		return
	}
	b.nextSub++
	x.id = strconv.Itoa(b.nextSub)
	x.created = time.Now()
	b.subs = append(b.subs, &x)
	b.mutations++
	b.mu.Unlock()
	w.Header().Set("Location", eventSubs+"/"+x.id)
	writeJSON(w, http.StatusCreated, subscriptionDoc(&x), "")
}

// subIndex is the index of subscription id, -1 when none. b.mu held.
func (b *bmc) subIndex(id string) int {
	for k, x := range b.subs {
		if x.id == id {
			return k
		}
	}
	return -1
}

// forgetSubscriptions drops every subscription (a BMC reboot). b.mu held.
func (b *bmc) forgetSubscriptions() {
	b.evForgotten += len(b.subs)
	b.subs = nil
}

// eventState is /sim/state's view. b.mu held.
func (b *bmc) eventState() *EventState {
	if !b.prof.events().push {
		return nil
	}
	st := &EventState{Subscriptions: []SubscriptionState{}, Sent: b.evSent, Failed: b.evFailed, Dropped: b.evDropped, Forgotten: b.evForgotten}
	for _, x := range b.subs {
		st.Subscriptions = append(st.Subscriptions, SubscriptionState{ID: x.id, Destination: x.dest, Context: x.context})
	}
	return st
}

// redactHeaders withholds a subscription's HttpHeaders (its secrets) from
// the audit.
func redactHeaders(body []byte) []byte {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return body
	}
	if _, ok := m["HttpHeaders"]; !ok {
		return body
	}
	m["HttpHeaders"] = "(redacted)"
	out, _ := json.Marshal(m)
	return out
}
