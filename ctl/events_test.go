package ctl

import (
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestHostDetailEvents: host get says on a line of its own whether the
// host's BMC pushes events, or why it is polled ("BMC events:", not to be
// read as the host's events); nothing when the agent runs without events.
func TestHostDetailEvents(t *testing.T) {
	for _, c := range []struct{ extra string }{
		{"live"},
		{"polling (no EventService)"},
	} {
		var b strings.Builder
		hostDetail(&b, &wire.Host{Name: "h", Rack: "r1", Status: &wire.HostStatus{Extra: map[string]string{wire.ExtraEvents: c.extra}}})
		found := false
		for _, l := range strings.Split(b.String(), "\n") {
			f := strings.Fields(l)
			found = found || (len(f) > 2 && f[0] == "BMC" && f[1] == "events:" && strings.Join(f[2:], " ") == c.extra)
		}
		if !found {
			t.Errorf("host get lacks a line \"BMC events: %s\":\n%s", c.extra, b.String())
		}
	}
	var b strings.Builder
	hostDetail(&b, &wire.Host{Name: "h", Rack: "r1", Status: &wire.HostStatus{}})
	if strings.Contains(b.String(), "events:") {
		t.Errorf("host get shows events without any:\n%s", b.String())
	}
}
