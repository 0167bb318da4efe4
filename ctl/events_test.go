package ctl

import (
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestHostDetailEvents: host get says whether the host's BMC pushes
// events, or why it is polled; nothing when the agent runs without events.
func TestHostDetailEvents(t *testing.T) {
	for _, c := range []struct{ extra, want string }{
		{"live", "Events:"},
		{"polling (no EventService)", "polling (no EventService)"},
	} {
		var b strings.Builder
		hostDetail(&b, &wire.Host{Name: "h", Rack: "r1", Status: &wire.HostStatus{Extra: map[string]string{wire.ExtraEvents: c.extra}}})
		if out := b.String(); !strings.Contains(out, c.want) || !strings.Contains(out, c.extra) {
			t.Errorf("host get lacks %q:\n%s", c.extra, out)
		}
	}
	var b strings.Builder
	hostDetail(&b, &wire.Host{Name: "h", Rack: "r1", Status: &wire.HostStatus{}})
	if strings.Contains(b.String(), "Events:") {
		t.Errorf("host get shows events without any:\n%s", b.String())
	}
}
