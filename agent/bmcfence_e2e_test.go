package agent_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/bmcsim"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestPausedHolderRefusedByBMC is the limit of the fence closed at the
// BMC, with real processes: the holder's power-off is held on its way to
// the BMC (a stalling proxy), the holder is paused (SIGSTOP), the lease
// moves to a second agent, the spec turns the host back on. Then the held
// request is delivered. With --bmc-account-rotation the new holder has
// rotated the tier's account and ended its sessions: the BMC answers the
// late request 401 and the host stays on. Without it (the second rack) the
// same late request is accepted: the limit as docs/operator.md states it.
func TestPausedHolderRefusedByBMC(t *testing.T) {
	testenv.SkipShort(t)
	e := newEnv(t, envOpts{bmcs: 2})
	for i, tc := range []struct {
		rack     string
		rotation bool
	}{{"rot-on", true}, {"rot-off", false}} {
		var flags []string
		if tc.rotation {
			flags = []string{"--bmc-account-rotation"}
		}
		flags = append(flags, "--lease-ttl", "5s")
		a1ID, a2ID, host := tc.rack+"-a1", tc.rack+"-a2", tc.rack+"-h"
		p := newStallProxy(t, fmt.Sprintf("http://127.0.0.1:%d", e.s.Base+i), a1ID, "/Actions/ComputerSystem.Reset")
		spec := e.hostSpec(host, tc.rack, i)
		spec.BMC.Address = "redfish+http://" + p.addr + "/redfish/v1/Systems/1"
		e.apply(spec)
		a1 := e.startAgent(tc.rack, a1ID, flags...)
		e.waitHost(host, 90*time.Second, "available and on", func(h *wire.Host) error {
			if err := stateIs(wire.StateAvailable, wire.OpOK)(h); err != nil {
				return err
			}
			if !h.Status.PoweredOn {
				return fmt.Errorf("not powered on yet")
			}
			return nil
		})
		epoch1 := e.host(host).Status.Epoch

		// a1's power-off is held on the way; a1 is paused with it in flight.
		p.hold()
		off := e.host(host)
		off.Online = false
		e.apply(off)
		select {
		case <-p.captured:
		case <-time.After(90 * time.Second):
			t.Fatalf("%s: a1's power-off never reached the proxy", tc.rack)
		}
		if err := a1.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		on := e.host(host)
		on.Online = true
		e.apply(on)

		// The lease moves to a2, which reports the host under its epoch
		// (and, with rotation, has rotated the account first).
		e.startAgent(tc.rack, a2ID, flags...)
		h2 := e.waitHost(host, 90*time.Second, "reported by a2", func(h *wire.Host) error {
			if h.Status == nil || h.Status.Epoch <= epoch1 || !h.Status.PoweredOn {
				return fmt.Errorf("status %+v", h.Status)
			}
			return nil
		})
		if tc.rotation {
			testenv.Eventually(t, 60*time.Second, "a2 rotated the account", func() error {
				rec, err := e.admin.GetBMCAccount(ctx(t), host, false, 0)
				if err != nil || rec.State != wire.BMCAccountConfirmed || rec.Epoch != h2.Status.Epoch {
					return fmt.Errorf("BMC account %v %v (a2's epoch %d)", rec, err, h2.Status.Epoch)
				}
				return nil
			})
		}

		// The late delivery.
		p.deliver()
		var got int
		select {
		case got = <-p.results:
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: the held request was not answered", tc.rack)
		}
		if err := a1.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		var late []bmcsim.AuditLine
		for _, l := range e.auditLines(i) {
			if strings.Contains(l.UserAgent, "("+a1ID+";") && strings.Contains(l.UserAgent, fmt.Sprintf("epoch=%d)", epoch1)) &&
				strings.Contains(l.Path, "ComputerSystem.Reset") {
				late = append(late, l)
			}
		}
		if len(late) == 0 {
			t.Fatalf("%s: no audit line of a1's late reset", tc.rack)
		}
		last := late[len(late)-1]
		t.Logf("%s: a1's late reset (epoch %d, rack now under epoch %d): BMC answered %d, audit %d as %q", tc.rack, epoch1, h2.Status.Epoch, got, last.Status, last.User)
		if tc.rotation {
			if got != 401 || last.Status != 401 {
				t.Errorf("%s: the BMC answered the stale holder's reset %d (audit %d), want 401", tc.rack, got, last.Status)
			}
			if st, err := e.simState(i); err != nil || st.Power != "On" {
				t.Errorf("%s: power after the refused reset: %+v %v", tc.rack, st.Power, err)
			}
		} else if got/100 != 2 {
			t.Errorf("%s: without rotation the stale reset was answered %d: the test no longer shows the limit", tc.rack, got)
		}
	}
}
