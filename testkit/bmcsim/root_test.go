package bmcsim

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
)

// TestServiceRootBuiltOnce: the service root, static with the
// AccountService and EventService links added, is built once per profile:
// a GET copies no document (it was decoded and encoded twice per request,
// a tenth of a simulator's requests in a fleet run), and still carries
// both links.
func TestServiceRootBuiltOnce(t *testing.T) {
	sim, err := Start(Config{Hosts: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	b := sim.bmcs[0]
	get := func() *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		sim.get(w, b, v1)
		return w
	}
	var root map[string]any
	if err := json.Unmarshal(get().Body.Bytes(), &root); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"AccountService", "EventService", "Systems"} {
		if _, ok := root[k].(map[string]any); !ok {
			t.Errorf("service root without %s: %v", k, root)
		}
	}
	// The recorder and its header map are a handful of allocations; a
	// decode of the root is over a hundred.
	if n := testing.AllocsPerRun(20, func() { get() }); n > 30 {
		t.Errorf("%.0f allocations per service root GET, want at most 30 (the body built once)", n)
	}
}
