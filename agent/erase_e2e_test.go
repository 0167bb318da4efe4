package agent_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestEraseOnDeprovision: real coordinator, agent and bmcsim. A host with
// automatedCleaningMode metadata is provisioned, then deprovisioned: its
// disks are erased (idrac: #Drive.SecureErase of both PERC drives, named
// in the event) before it is available again. On a BMC that offers no
// erase for a drive (default profile: Disk1) the host stops in a
// deprovisioning error naming the drive, never available.
func TestEraseOnDeprovision(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator, bmcsim and an agent per profile")
	}
	t.Run("idrac secure erase", func(t *testing.T) {
		e, name := prepEnv(t, "idrac")
		h := prepHost(e, name, "idrac")
		h.AutomatedCleaningMode = wire.CleaningMetadata
		h.Image = &wire.Image{URL: "http://images.example/ubuntu.iso"}
		e.apply(h)
		e.startAgent("r1", "a1", "--poll-interval", "1s")
		e.waitHost(name, 120*time.Second, "provisioned", stateIs(wire.StateProvisioned, wire.OpOK))
		h = e.host(name)
		h.Image = nil
		e.apply(h)
		got := e.waitHost(name, 120*time.Second, "available after the erase", stateIs(wire.StateAvailable, wire.OpOK))
		if le := got.Status.DayTwo; le == nil || le.LastErase == nil || len(le.LastErase.Disks) != 2 || !strings.Contains(le.LastErase.Disks[0], "Drive.SecureErase") {
			t.Errorf("status.dayTwo.lastErase: %+v", got.Status.DayTwo)
		}
		st, err := e.simState(0)
		if err != nil {
			t.Fatal(err)
		}
		erased := 0
		for _, d := range st.Drives {
			if d.Erased > 0 {
				erased++
			}
		}
		if erased != 2 {
			t.Errorf("drives %+v: want both PERC drives erased", st.Drives)
		}
		evs, err := e.admin.Events(ctx(t), name)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, ev := range evs.Items {
			if ev.Reason == "DisksErased" && strings.Contains(ev.Message, "Drive.SecureErase") {
				found = true
			}
		}
		if !found {
			t.Errorf("no DisksErased event naming Drive.SecureErase: %+v", evs.Items)
		}
	})
	t.Run("default profile cannot erase", func(t *testing.T) {
		e := newEnv(t, envOpts{bmcs: 1})
		name := "erase-default"
		h := e.hostSpec(name, "r1", 0)
		h.AutomatedCleaningMode = wire.CleaningMetadata
		h.Image = &wire.Image{URL: "http://images.example/ubuntu.iso"}
		e.apply(h)
		e.startAgent("r1", "a1", "--poll-interval", "1s")
		e.waitHost(name, 120*time.Second, "provisioned", stateIs(wire.StateProvisioned, wire.OpOK))
		h = e.host(name)
		h.Image = nil
		e.apply(h)
		e.waitHost(name, 120*time.Second, "a deprovisioning error naming Disk1", func(h *wire.Host) error {
			st := h.Status
			if st == nil || st.ProvisioningState != wire.StateDeprovisioning || st.ErrorType != wire.ErrDeprovisioning || !strings.Contains(st.ErrorMessage, "Disk1") {
				return fmt.Errorf("status %+v", st)
			}
			return nil
		})
	})
}
