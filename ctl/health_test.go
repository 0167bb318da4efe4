package ctl

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// host list --health keeps the hosts whose BMC reports that health
// (unhealthy: any but OK; never a host not read), from whole hosts and
// from summaries alike; a value that is no health is a usage error; host
// get shows the verdict, each kind and the problems.
func TestHostHealthFilterAndDetail(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	hh := func(h string) *wire.HostStatus {
		return &wire.HostStatus{ProvisioningState: wire.StateProvisioned, Health: &wire.HardwareHealth{Health: h, Since: t0}}
	}
	whole := []wire.Host{{Name: "new"}, {Name: "ok", Status: hh("OK")}, {Name: "hot", Status: hh("Critical")},
		{Name: "blind", Status: hh("Unknown")}, {Name: "unread", Status: &wire.HostStatus{ProvisioningState: wire.StateAvailable}}}
	// The summary view's JSON decoded as the CLI decodes a page.
	var summaries []wire.Host
	for i := range whole {
		var s wire.HostSummary
		var st wire.HostStatusSummary
		wire.Summarize(&whole[i], &s, &st)
		b, _ := json.Marshal(s)
		var h wire.Host
		if err := json.Unmarshal(b, &h); err != nil {
			t.Fatalf("summary %s: %v", b, err)
		}
		summaries = append(summaries, h)
	}
	for _, hosts := range [][]wire.Host{whole, summaries} {
		for _, c := range []struct{ health, want string }{
			{"unhealthy", "hot,blind"}, {"Critical", "hot"}, {"OK", "ok"}, {"Unknown", "blind"}, {"Warning", ""},
		} {
			f := listFilter{health: c.health}
			if err := f.check(); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range f.keep(append([]wire.Host(nil), hosts...)) {
				got = append(got, h.Name)
			}
			if g := strings.Join(got, ","); g != c.want {
				t.Errorf("--health %s kept %q; want %q", c.health, g, c.want)
			}
		}
	}
	var ue *UsageError
	if err := (&listFilter{health: "sick"}).check(); err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), "unhealthy") {
		t.Errorf("--health sick: %v", err)
	}

	st := hh("Critical")
	st.Health.Components = map[string]string{wire.HealthPowerSupply: "Critical", wire.HealthSystem: "Critical", wire.HealthFan: "OK"}
	st.Health.Problems = []string{"power supply PSU 1: Critical", "system Systems/1: Critical"}
	var b strings.Builder
	hostDetail(&b, &wire.Host{Name: "h", Rack: "r1", Status: st})
	out := b.String()
	for _, want := range []string{"Critical (system Critical, fan OK, powerSupply Critical) since 2026-03-01T10:00:00Z", "power supply PSU 1: Critical", "system Systems/1: Critical"} {
		if !strings.Contains(out, want) {
			t.Errorf("host get lacks %q:\n%s", want, out)
		}
	}
}
