package ctl

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestRebootAndInspect drives reboot and inspect against a real
// coordinator; the fake agent plays the rack agent (acks, drops).
func TestRebootAndInspect(t *testing.T) {
	c := startCoordinator(t)
	ctx := context.Background()
	c.mustCtl(t, "", "host", "apply", "-f", "testdata/hosts.yaml")
	ag := c.agent(t, "r1", "agent-r1-reboot")
	on := wire.HostStatus{ProvisioningState: wire.StateProvisioned, OperationalStatus: wire.OpOK, PoweredOn: true}
	ag.report(t, "r1-h01", on, false)
	ag.report(t, "r1-h03", wire.HostStatus{ProvisioningState: wire.StateRegistering, OperationalStatus: wire.OpOK}, false)

	t.Run("usage errors", func(t *testing.T) {
		for _, args := range [][]string{
			{"reboot", "r1-h01", "--hold-off", "--release"},
			{"reboot", "r1-h01", "--requester", "x"},
			{"reboot", "r1-h01", "--hold-off", "--requester", "no/slash"},
			{"reboot", "r1-h01", "--release", "--soft"},
			{"reboot"},
		} {
			if r := c.ctl(t, "", args...); r.code != ExitUsage {
				t.Errorf("%v: %s, want a usage error", args, r)
			}
		}
	})

	t.Run("refused in registering names the state", func(t *testing.T) {
		r := c.ctl(t, "", "reboot", "r1-h03")
		if r.code != ExitConflict || !strings.Contains(r.stderr, "is registering") {
			t.Fatalf("reboot of a registering host: %s", r)
		}
		r = c.ctl(t, "", "inspect", "r1-h01")
		if r.code != ExitConflict || !strings.Contains(r.stderr, "only an available host") {
			t.Fatalf("inspect of a provisioned host: %s", r)
		}
	})

	t.Run("hold off, wait, release", func(t *testing.T) {
		done := make(chan struct{})
		go func() { // the agent powers the host off and acknowledges the hold
			defer close(done)
			for i := 0; i < 300; i++ {
				h, err := ag.cl.GetHost(ctx, "r1-h01")
				if err == nil && h.Intents != nil && h.Intents.PowerOff["fw"] != nil {
					off := on
					off.PoweredOn = false
					ag.report(t, "r1-h01", off, false, func(r *wire.StatusReport) {
						r.Acks = []wire.IntentAck{{Kind: wire.IntentPowerOff, CreatedIndex: h.Intents.PowerOff["fw"].CreatedIndex}}
					})
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
		r := c.mustCtl(t, "", "reboot", "r1-h01", "--hold-off", "--requester", "fw", "--soft", "--wait", "--timeout", "60s")
		<-done
		if !strings.Contains(r.stdout, "r1-h01: power-off (soft) held by fw") || !strings.Contains(r.stdout, "power-off hold done: 1 host(s) held off") {
			t.Fatalf("hold --wait: %s", r)
		}
		list := c.mustCtl(t, "", "host", "list", "--rack", "r1")
		if !strings.Contains(list.stdout, "poweroff:fw") || strings.Contains(list.stdout, "poweroff:fw*") {
			t.Fatalf("host list does not show the acknowledged hold: %s", list.stdout)
		}
		get := c.mustCtl(t, "", "host", "get", "r1-h01")
		if !strings.Contains(get.stdout, "power-off (soft) held by fw, acknowledged under epoch") {
			t.Fatalf("host get does not show the hold: %s", get.stdout)
		}
		r = c.mustCtl(t, "", "reboot", "r1-h01", "--release", "--requester", "fw", "-o", "json")
		if !strings.Contains(r.stdout, `"name": "r1-h01"`) || strings.Contains(r.stdout, `"powerOff"`) {
			t.Fatalf("release -o json: %s", r)
		}
	})

	t.Run("reboot --wait until the agent drops it", func(t *testing.T) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; i < 300; i++ {
				h, err := ag.cl.GetHost(ctx, "r1-h01")
				if err == nil && h.Intents != nil && h.Intents.Reboot != nil {
					ag.report(t, "r1-h01", on, false, func(r *wire.StatusReport) {
						r.Acks = []wire.IntentAck{{Kind: wire.IntentReboot, CreatedIndex: h.Intents.Reboot.CreatedIndex, Drop: true}}
					})
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
		r := c.mustCtl(t, "", "reboot", "r1-h01", "--soft", "--wait", "--timeout", "60s")
		<-done
		if !strings.Contains(r.stdout, "r1-h01: reboot (soft) requested") || !strings.Contains(r.stdout, "reboot done: 1 host(s) rebooted") {
			t.Fatalf("reboot --wait: %s", r)
		}
	})

	t.Run("reboot -o json", func(t *testing.T) {
		r := c.mustCtl(t, "", "reboot", "r1-h01", "-o", "json")
		if !strings.Contains(r.stdout, `"mode": "hard"`) || !strings.Contains(r.stdout, `"createdIndex"`) {
			t.Fatalf("reboot -o json: %s", r)
		}
	})
}
