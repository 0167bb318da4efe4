package bmcsim

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// With FetchMedia the BMC reads the inserted image's head by a Range GET
// before it answers the insert; an image nobody serves is recorded as a
// read error; without FetchMedia nothing is fetched.
func TestFetchMediaReadsTheInsertedImage(t *testing.T) {
	var ranges atomic.Value
	img := strings.Repeat("x", 1<<20)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ranges.Store(r.Header.Get("Range"))
		http.ServeContent(w, r, "a.iso", time.Unix(0, 0), strings.NewReader(img))
	}))
	defer origin.Close()
	for _, fetch := range []bool{true, false} {
		sim, err := Start(Config{Hosts: 1, FetchMedia: fetch})
		if err != nil {
			t.Fatal(err)
		}
		insert := func(url string) {
			t.Helper()
			req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d", sim.bmcs[0].port)+
				"/redfish/v1/Managers/1/VirtualMedia/CD1/Actions/VirtualMedia.InsertMedia", strings.NewReader(`{"Image":"`+url+`"}`))
			req.SetBasicAuth(DefaultUsername, DefaultPassword)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode/100 != 2 {
				t.Fatalf("insert: %s", resp.Status)
			}
		}
		insert(origin.URL + "/a.iso")
		m := sim.State(0).VirtualMedia[0]
		switch {
		case fetch && (m.Read != FetchMediaBytes || m.ReadError != "" || ranges.Load() != "bytes=0-65535"):
			t.Errorf("FetchMedia: read %d (%q), origin saw Range %v", m.Read, m.ReadError, ranges.Load())
		case !fetch && (m.Read != 0 || m.ReadError != ""):
			t.Errorf("without FetchMedia the BMC read %d (%q)", m.Read, m.ReadError)
		}
		b := sim.bmcs[0]
		b.mu.Lock()
		b.ejectMedia(0)
		b.mu.Unlock()
		if fetch {
			insert("http://127.0.0.1:1/nothing.iso")
			if m := sim.State(0).VirtualMedia[0]; m.Read != 0 || m.ReadError == "" {
				t.Errorf("unreachable image: read %d, error %q", m.Read, m.ReadError)
			}
		}
		sim.Close()
	}
}
