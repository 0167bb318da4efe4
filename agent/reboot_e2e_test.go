package agent_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// Reboot, power-off holds and re-inspection with real processes:
// coordinator, rackfence-bmcsim, rackfence-agent (direct provisioner).

// resetsSince lists the ResetType of BMC i's ComputerSystem.Reset calls
// after the first n audit lines.
func resetsSince(lines []bmcsim.AuditLine, n int) []string {
	var out []string
	for _, l := range lines[min(n, len(lines)):] {
		if strings.HasSuffix(l.Path, "ComputerSystem.Reset") {
			for _, t := range []string{"GracefulShutdown", "ForceOff", "ForceOn", "On"} {
				if strings.Contains(l.Body, `"`+t+`"`) {
					out = append(out, t)
					break
				}
			}
		}
	}
	return out
}

func rebootGone(h *wire.Host) error {
	if h.Intents != nil && h.Intents.Reboot != nil {
		return fmt.Errorf("reboot intent still there: %+v (status %+v)", h.Intents.Reboot, h.Status)
	}
	return nil
}

func poweredOnAfter(e *env, i int) error {
	st, err := e.simState(i)
	if err != nil {
		return err
	}
	if st.Power != "On" {
		return fmt.Errorf("BMC %d power %s", i, st.Power)
	}
	return nil
}

// TestRebootHoldAndInspect: a hard reboot is ForceOff then On; a soft one
// GracefulShutdown then On; two power-off holds keep the host off until
// both are withdrawn; an inspect reads the hardware of an available host
// again and records the inspection in the operation history.
func TestRebootHoldAndInspect(t *testing.T) {
	e := newEnv(t, envOpts{bmcs: 1, simArgs: []string{"--graceful-shutdown-delay", "300ms"}})
	e.apply(e.hostSpec("rb", "r1", 0))
	e.startAgent("r1", "a1", "--poll-interval", "200ms", "--status-refresh", "2s")
	first := e.waitHost("rb", 90*time.Second, "available and on", func(h *wire.Host) error {
		if err := stateIs(wire.StateAvailable, wire.OpOK)(h); err != nil {
			return err
		}
		if !h.Status.PoweredOn {
			return fmt.Errorf("not powered on yet")
		}
		return nil
	})

	for _, mode := range []string{wire.RebootHard, wire.RebootSoft} {
		n := len(e.auditLines(0))
		start := time.Now()
		in, err := e.admin.Reboot(ctx(t), "rb", wire.RebootRequest{Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		e.waitHost("rb", 60*time.Second, "reboot "+mode+" done", rebootGone)
		t.Logf("reboot %s: intent %d dropped after %s", mode, in.CreatedIndex, time.Since(start).Round(time.Millisecond))
		want := []string{"ForceOff", "On"}
		if mode == wire.RebootSoft {
			want = []string{"GracefulShutdown", "On"}
		}
		if got := resetsSince(e.auditLines(0), n); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("reboot %s sent resets %v, want %v", mode, got, want)
		}
		if err := poweredOnAfter(e, 0); err != nil {
			t.Fatal(err)
		}
	}
	evs, err := e.admin.Events(ctx(t), "rb")
	if err != nil {
		t.Fatal(err)
	}
	rebooted := 0
	for _, ev := range evs.Items {
		if ev.Reason == "Rebooted" {
			rebooted++
		}
	}
	if rebooted != 2 {
		t.Fatalf("%d Rebooted events, want 2: %+v", rebooted, evs.Items)
	}

	// Two requesters hold the host off.
	for _, k := range []string{"fw", "rma"} {
		if _, err := e.admin.Reboot(ctx(t), "rb", wire.RebootRequest{PowerOff: true, Requester: k}); err != nil {
			t.Fatal(err)
		}
	}
	e.waitHost("rb", 60*time.Second, "both holds acknowledged", func(h *wire.Host) error {
		if h.Intents == nil || len(h.Intents.PowerOff) != 2 {
			return fmt.Errorf("holds %+v", h.Intents)
		}
		for k, it := range h.Intents.PowerOff {
			if !it.Acknowledged {
				return fmt.Errorf("hold %s not acknowledged", k)
			}
		}
		return nil
	})
	if st, _ := e.simState(0); st.Power != "Off" {
		t.Fatalf("held off, BMC power %s", st.Power)
	}
	if _, err := e.admin.ReleasePowerOff(ctx(t), "rb", "fw"); err != nil {
		t.Fatal(err)
	}
	// The agent saw the withdrawal (its next status names only rma) and
	// keeps the host off.
	released := time.Now()
	e.waitHost("rb", 60*time.Second, "a status written after the withdrawal", func(h *wire.Host) error {
		if h.Status == nil || h.Status.LastUpdated.Before(released) {
			return fmt.Errorf("no status since the withdrawal")
		}
		return nil
	})
	time.Sleep(time.Second)
	if st, _ := e.simState(0); st.Power != "Off" {
		t.Fatalf("one hold left, BMC power %s", st.Power)
	}
	if _, err := e.admin.ReleasePowerOff(ctx(t), "rb", "rma"); err != nil {
		t.Fatal(err)
	}
	e.waitHost("rb", 60*time.Second, "powered on once no hold is left", func(h *wire.Host) error {
		if h.Intents != nil || h.Status == nil || !h.Status.PoweredOn {
			return fmt.Errorf("intents %+v, status %+v", h.Intents, h.Status)
		}
		return poweredOnAfter(e, 0)
	})

	// Re-inspection.
	start := time.Now()
	if _, err := e.admin.Inspect(ctx(t), "rb", wire.IntentRequest{Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	h := e.waitHost("rb", 60*time.Second, "inspected again", func(h *wire.Host) error {
		if h.Intents != nil && h.Intents.Inspect != nil {
			return fmt.Errorf("inspect intent still there")
		}
		if err := stateIs(wire.StateAvailable, wire.OpOK)(h); err != nil {
			return err
		}
		oh := h.Status.OperationHistory
		if oh == nil || !oh.Inspect.Start.After(first.Status.OperationHistory.Inspect.Start) || oh.Inspect.End.IsZero() {
			return fmt.Errorf("operation history %+v", oh)
		}
		return nil
	})
	t.Logf("inspect: intent dropped after %s (operation %s)", time.Since(start).Round(time.Millisecond),
		h.Status.OperationHistory.Inspect.End.Sub(h.Status.OperationHistory.Inspect.Start).Round(time.Millisecond))
	if h.Status.HardwareDetails == nil || len(h.Status.HardwareDetails.NICs) == 0 {
		t.Fatalf("no hardware details after the re-inspection: %+v", h.Status.HardwareDetails)
	}
}

// TestSoftRebootFallsBackToHard: an OS that ignores the graceful shutdown
// is powered off hard after --soft-power-off-timeout, with a Warning event.
func TestSoftRebootFallsBackToHard(t *testing.T) {
	e := newEnv(t, envOpts{bmcs: 1, simArgs: []string{"--ignore-graceful-shutdown"}})
	e.apply(e.hostSpec("sf", "r1", 0))
	maddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, "127.0.0.1"))
	e.startAgent("r1", "a1", "--poll-interval", "200ms", "--soft-power-off-timeout", "2s", "--metrics-addr", maddr)
	e.waitHost("sf", 90*time.Second, "available and on", func(h *wire.Host) error {
		if err := stateIs(wire.StateAvailable, wire.OpOK)(h); err != nil {
			return err
		}
		if !h.Status.PoweredOn {
			return fmt.Errorf("not powered on yet")
		}
		return nil
	})
	n := len(e.auditLines(0))
	start := time.Now()
	if _, err := e.admin.Reboot(ctx(t), "sf", wire.RebootRequest{Mode: wire.RebootSoft}); err != nil {
		t.Fatal(err)
	}
	e.waitHost("sf", 60*time.Second, "soft reboot done", rebootGone)
	took := time.Since(start)
	t.Logf("soft reboot with hard fallback (timeout 2s): %s", took.Round(time.Millisecond))
	if got := resetsSince(e.auditLines(0), n); strings.Join(got, ",") != "GracefulShutdown,ForceOff,On" {
		t.Fatalf("resets %v, want GracefulShutdown, ForceOff, On", got)
	}
	evs, err := e.admin.Events(ctx(t), "sf")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ev := range evs.Items {
		found = found || (ev.Reason == "SoftPowerOffTimedOut" && ev.Type == wire.EventWarning)
	}
	if !found {
		t.Fatalf("no SoftPowerOffTimedOut warning: %+v", evs.Items)
	}
	if n := scrape(t, maddr, "rackfence_agent_soft_power_off_fallbacks_total"); n != 1 {
		t.Fatalf("rackfence_agent_soft_power_off_fallbacks_total = %v, want 1", n)
	}
}
