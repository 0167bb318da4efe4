package bmcsim

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestEventServiceRedfishtool checks the EventService of every profile
// that has one with DMTF's redfishtool (raw calls: it has no event
// subcommand): the service, a subscription created, listed, read back
// without its HttpHeaders, a test event delivered with the header,
// deleted. A profile without one (basic-only) answers 404. Four
// profiles: the EventService code is the same for all.
func TestEventServiceRedfishtool(t *testing.T) {
	bin := testenv.LookPath(t, "redfishtool")
	for _, name := range []string{"ilo", "idrac", "openbmc", "basic-only"} {
		t.Run(name, func(t *testing.T) {
			sim, err := Start(Config{Hosts: 1, Profile: name})
			if err != nil {
				t.Fatal(err)
			}
			defer sim.Close()
			rv := newReceiver(t)
			run := func(args ...string) (map[string]any, int, string) {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				full := append([]string{"-r", strings.TrimPrefix(sim.URL(0), "http://"), "-S", "Never", "-u", "admin", "-p", "password", "-A", "Basic"}, args...)
				cmd := exec.CommandContext(ctx, bin, full...)
				var out, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &stderr
				err := cmd.Run()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				} else if err != nil {
					t.Fatalf("redfishtool %v: %v", args, err)
				}
				var m map[string]any
				_ = json.Unmarshal(out.Bytes(), &m)
				return m, code, out.String() + stderr.String()
			}
			es, code, out := run("raw", "GET", eventService)
			if !sim.prof.events().push {
				if code == 0 {
					t.Errorf("%s offers no EventService, yet:\n%s", name, out)
				}
				return
			}
			if code != 0 || es["ServiceEnabled"] != true {
				t.Fatalf("raw GET EventService: exit %d\n%s", code, out)
			}
			sub := `{"Destination":"` + rv.srv.URL + `/e","Context":"rft","Protocol":"Redfish","HttpHeaders":[{"X-Secret":"abc"}]}`
			if _, code, out := run("raw", "POST", eventSubs, "-d", sub); code != 0 {
				t.Fatalf("raw POST Subscriptions: exit %d\n%s", code, out)
			}
			coll, code, out := run("raw", "GET", eventSubs)
			members, _ := coll["Members"].([]any)
			if code != 0 || len(members) != 1 {
				t.Fatalf("raw GET Subscriptions: exit %d\n%s", code, out)
			}
			id := odataID(members[0])
			if _, _, out := run("raw", "GET", id); strings.Contains(out, "abc") || !strings.Contains(out, "rft") {
				t.Errorf("subscription read back:\n%s", out)
			}
			if _, code, out := run("raw", "POST", eventTestPath, "-d", `{"MessageId":"Base.1.0.Success"}`); code != 0 {
				t.Fatalf("SubmitTestEvent: exit %d\n%s", code, out)
			}
			if g := rv.waitN(t, 1)[0]; g.header.Get("X-Secret") != "abc" || !strings.Contains(string(g.body), "Base.1.0.Success") {
				t.Errorf("test event: %v %s", g.header, g.body)
			}
			if _, code, out := run("raw", "DELETE", id); code != 0 {
				t.Fatalf("raw DELETE: exit %d\n%s", code, out)
			}
			if st := sim.State(0).Events; len(st.Subscriptions) != 0 {
				t.Errorf("after DELETE: %+v", st)
			}
		})
	}
}

// TestEventServiceSushy drives the EventService with Debian's
// python3-sushy 4.3.3 (testdata/sushy_events.py): EventService,
// EventDestinationCollection.create with HttpHeaders, the header not read
// back, submit_test_event (delivered with the header), delete.
func TestEventServiceSushy(t *testing.T) {
	testenv.RequirePython(t, "sushy", "python3-sushy (Debian)")
	for _, name := range []string{"ilo", "idrac", "openbmc"} {
		t.Run(name, func(t *testing.T) {
			sim, err := Start(Config{Hosts: 1, Profile: name})
			if err != nil {
				t.Fatal(err)
			}
			defer sim.Close()
			rv := newReceiver(t)
			p := testenv.Start(t, "sushy", "/usr/bin/python3", nil, "testdata/sushy_events.py", sim.URL(0), "admin", "password", rv.srv.URL+"/e", "s3")
			err, done := p.Wait(2 * time.Minute)
			out := p.Output()
			if !done || err != nil {
				t.Fatalf("sushy: done %v, %v\n%s", done, err, out)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			var got struct {
				Enabled            bool
				Retry              int
				Context            string
				HeadersReadBack    []any `json:"headers_read_back"`
				Members            int
				MembersAfterDelete int `json:"members_after_delete"`
			}
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
				t.Fatalf("sushy output: %v\n%s", err, out)
			}
			if !got.Enabled || got.Retry != 3 || got.Context != "sushy-check" || len(got.HeadersReadBack) != 0 || got.Members != 1 || got.MembersAfterDelete != 0 {
				t.Errorf("sushy saw %+v\n%s", got, out)
			}
			if g := rv.waitN(t, 1)[0]; g.header.Get("X-Rackfence-Secret") != "s3" {
				t.Errorf("test event header: %v", g.header)
			}
		})
	}
}
