package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/provisioner/fake"
)

// servicerProv is the fixture provisioner with a back end that applies
// firmware itself (as Ironic does through its clean steps): the first
// Service call is in progress, the next ones done.
type servicerProv struct {
	*fake.Provisioner
	mu    sync.Mutex
	specs []provisioner.DayTwoSpec
}

func (s *servicerProv) Service(_ context.Context, _ provisioner.Host, spec provisioner.DayTwoSpec) (provisioner.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.specs = append(s.specs, spec)
	if len(s.specs) == 1 {
		return provisioner.Result{InProgress: true, Message: "back end flashing"}, nil
	}
	return provisioner.Result{Message: "firmware applied by the back end"}, nil
}

func (s *servicerProv) calls() []provisioner.DayTwoSpec {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]provisioner.DayTwoSpec(nil), s.specs...)
}

// A provisioner that services hosts itself (Ironic) gets spec.firmware
// through Service, called again while in progress, and the host goes
// back to available; no BMC task is recorded for it.
func TestInProcessServicerTakesFirmware(t *testing.T) {
	var sp *servicerProv
	c, r, _ := newRack(t, agentOpts{tune: func(cfg *Config) {
		sp = &servicerProv{Provisioner: cfg.Provisioner.(*fake.Provisioner)}
		cfg.Provisioner = sp
	}})
	h := fakeHost("fw0", "r1", 0)
	h.Firmware = []wire.FirmwareComponent{{Component: "bios", URL: "http://192.0.2.99/U46_v1.80.bin",
		Checksum: "sha256:" + strings.Repeat("ab", 32), Version: "U46_v1.80"}}
	c.Apply(h)
	got := c.WaitHost("fw0", waitLong, "available after the back end's firmware update", func(h *wire.Host) error {
		if err := stateIs(wire.StateAvailable, wire.OpOK)(h); err != nil {
			return err
		}
		if n := len(sp.calls()); n < 2 {
			return fmt.Errorf("Service called %d times, want 2 (in progress, then done)", n)
		}
		return nil
	})
	if got.Status.ErrorType != "" || got.Task != nil {
		t.Errorf("status error %q (%s), task %+v; want none", got.Status.ErrorType, got.Status.ErrorMessage, got.Task)
	}
	for _, s := range sp.calls() {
		if len(s.Firmware) != 1 || s.Firmware[0].URL != h.Firmware[0].URL {
			t.Errorf("Service got %+v, want the host's firmware", s)
		}
	}
	_ = r
}
