package agent_test

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// simPost posts body to path on BMC i of s (a /sim/ control, or Redfish
// as the simulator's admin).
func simPost(t testing.TB, s *rig.Sim, i int, path, body string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d%s", s.Base+i, path), strings.NewReader(body))
	req.SetBasicAuth("admin", "password")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("POST %s: %d", path, resp.StatusCode)
	}
}

func eventsIs(want string) func(h *wire.Host) error {
	return func(h *wire.Host) error {
		if h.Status == nil || h.Status.Extra[wire.ExtraEvents] != want {
			var got string
			if h.Status != nil {
				got = h.Status.Extra[wire.ExtraEvents]
			}
			return fmt.Errorf("events %q, want %q", got, want)
		}
		return nil
	}
}

// TestEventsFromTheBMC (real coordinator, bmcsim and agent): with the
// power poll at 10 minutes, a power change made at the machine reaches
// the agent by the BMC's event, which reads the power at once and powers
// the host back on (spec online); a forged event and a replayed one
// change nothing and are counted; a BMC reboot forgets the subscription
// and the agent subscribes again; a BMC without an EventService is
// polled, as its status says; a detach removes the subscription.
func TestEventsFromTheBMC(t *testing.T) {
	testenv.SkipShort(t)
	e := newEnv(t, envOpts{bmcs: 1})
	old := rig.StartSim(t, t.TempDir(), 2, 0, "--profile", "basic-only")
	e.apply(e.hostSpec("ev", "r1", 0))
	e.apply(old.Host("old", "r1", 1)) // its MAC differs from BMC 0's of the other simulator
	evPort := testenv.FreePort(t, "127.0.0.1")
	maddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, "127.0.0.1"))
	e.startAgent("r1", "a1", "--metrics-addr", maddr, "--events-addr", fmt.Sprintf("127.0.0.1:%d", evPort),
		"--power-poll", "10m", "--events-silence", "20s")
	// Powered on and read back too: the agent powers the host on (spec
	// online) right after it is available, and a power-off made at the
	// machine while that power-on is still being read back would only
	// make that read-back wait, with no second reset to count.
	e.waitHost("ev", 90*time.Second, "available, on, with live events", func(h *wire.Host) error {
		if err := stateIs(wire.StateAvailable, wire.OpOK)(h); err != nil {
			return err
		}
		if !h.Status.PoweredOn || h.Status.PowerState != wire.PowerOn {
			return fmt.Errorf("poweredOn %v powerState %q", h.Status.PoweredOn, h.Status.PowerState)
		}
		return eventsIs("live")(h)
	})
	e.waitHost("old", 90*time.Second, "available, polled", func(h *wire.Host) error {
		if err := stateIs(wire.StateAvailable, wire.OpOK)(h); err != nil {
			return err
		}
		return eventsIs("polling (no EventService)")(h)
	})
	if st, _ := e.simState(0); st.Events == nil || len(st.Events.Subscriptions) != 1 || !strings.HasPrefix(st.Events.Subscriptions[0].Context, "rackfence r1 ev ") {
		t.Fatalf("subscriptions at the BMC: %+v", st.Events)
	}
	eventReads := `rackfence_agent_power_reads_total{cause="event",result="ok"}`

	// A power change at the machine: the event makes the agent read it and
	// power the host back on, long before the 10-minute poll.
	e.s.SetKnobs(0, `{"events": {"replay": true}}`)
	resetsBefore := countResets(e, "On")
	simPost(t, e.s, 0, "/sim/power", `{"power": "Off"}`)
	testenv.Eventually(t, 60*time.Second, "the agent powers the host on again after the event", func() error {
		if n := countResets(e, "On"); n <= resetsBefore {
			return fmt.Errorf("%d power-on resets, as before", n)
		}
		return nil
	})
	if n := scrape(t, maddr, eventReads); n < 1 {
		t.Errorf("power reads caused by events: %v", n)
	}
	if n := scrape(t, maddr, `rackfence_agent_power_reads_total{cause="poll",result="ok"}`); n > 0 {
		t.Logf("a poll read happened too (%v): its first read is spread over the period", n)
	}
	testenv.Eventually(t, 60*time.Second, "the replayed deliveries counted", func() error {
		if n, _ := tryScrape(maddr, `rackfence_agent_bmc_events_total{result="replayed"}`); n < 1 {
			return fmt.Errorf("replayed %v", n)
		}
		return nil
	})
	e.s.SetKnobs(0, `{"events": {"replay": false}}`)
	e.waitHost("ev", 30*time.Second, "on again", func(h *wire.Host) error {
		if !h.Status.PoweredOn || h.Status.PowerState != wire.PowerOn {
			return fmt.Errorf("poweredOn %v powerState %q", h.Status.PoweredOn, h.Status.PowerState)
		}
		return nil
	})

	// Forged events: no secret, a wrong one, an unknown host.
	reads := scrape(t, maddr, eventReads)
	cl := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	body := `{"Context":"rackfence r1 ev epoch 1","Events":[{"EventId":"999999","MessageId":"ResourceEvent.1.0.ResourceChanged","EventTimestamp":"2099-01-01T00:00:00Z"}]}`
	for _, c := range []struct{ path, secret string }{{"/events/ev", ""}, {"/events/ev", "0000"}, {"/events/nohost", "0000"}} {
		req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("https://127.0.0.1:%d%s", evPort, c.path), strings.NewReader(body))
		if c.secret != "" {
			req.Header.Set("X-Rackfence-Event-Token", c.secret)
		}
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusNotFound {
			t.Errorf("forged %s (secret %q): %d", c.path, c.secret, resp.StatusCode)
		}
	}
	if n := scrape(t, maddr, `rackfence_agent_bmc_events_total{result="bad-secret"}`); n != 2 {
		t.Errorf("bad-secret events counted: %v, want 2", n)
	}
	if n := scrape(t, maddr, `rackfence_agent_bmc_events_total{result="unknown-host"}`); n != 1 {
		t.Errorf("unknown-host events counted: %v, want 1", n)
	}
	if n := scrape(t, maddr, eventReads); n != reads {
		t.Errorf("forged events made %v power reads", n-reads)
	}

	// A BMC reboot forgets the subscription: the agent subscribes again.
	simPost(t, e.s, 0, "/redfish/v1/Managers/1/Actions/Manager.Reset", `{"ResetType": "GracefulRestart"}`)
	testenv.Eventually(t, 90*time.Second, "subscribed again after the BMC reboot", func() error {
		st, err := e.simState(0)
		if err != nil {
			return err
		}
		if st.Events.Forgotten < 1 || len(st.Events.Subscriptions) != 1 {
			return fmt.Errorf("forgotten %d, subscriptions %d", st.Events.Forgotten, len(st.Events.Subscriptions))
		}
		if n, _ := tryScrape(maddr, `rackfence_agent_bmc_event_subscribe_total{op="rearm",result="ok"}`); n < 1 {
			return fmt.Errorf("rearms %v", n)
		}
		return nil
	})
	e.waitHost("ev", 60*time.Second, "live again", eventsIs("live"))

	// Detach removes the subscription.
	if _, err := e.admin.Detach(ctx(t), "ev", wire.IntentRequest{Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 60*time.Second, "no subscription after the detach", func() error {
		st, err := e.simState(0)
		if err != nil {
			return err
		}
		if len(st.Events.Subscriptions) != 0 {
			return fmt.Errorf("%d subscriptions", len(st.Events.Subscriptions))
		}
		return nil
	})
	if n := scrape(t, maddr, `rackfence_agent_bmc_event_subscriptions{state="live"}`); n != 0 {
		t.Errorf("live subscriptions after the detach: %v", n)
	}
}

// countResets counts ComputerSystem.Reset calls of ResetType typ the
// simulator answered 2xx.
func countResets(e *env, typ string) int {
	n := 0
	for _, l := range e.auditLines(0) {
		if strings.HasSuffix(l.Path, "/Actions/ComputerSystem.Reset") && strings.Contains(l.Body, `"`+typ+`"`) && l.Status/100 == 2 {
			n++
		}
	}
	return n
}
