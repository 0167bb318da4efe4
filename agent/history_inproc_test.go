package agent

import (
	"fmt"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestInProcessOperationHistory: a host the agent makes available carries
// status.operationHistory with register and inspect each started and ended
// (start ≤ end, register ended no later than inspect started), nothing
// provisioned yet, and the agent observed both durations in
// rackfence_agent_operation_duration_seconds.
func TestInProcessOperationHistory(t *testing.T) {
	c, r, _ := newRack(t, agentOpts{})
	before := time.Now().UTC()
	availableHost(t, c, r, "h0", 0)
	h := c.WaitHost("h0", waitLong, "with an operation history", func(h *wire.Host) error {
		if h.Status == nil || h.Status.OperationHistory == nil {
			return fmt.Errorf("status %+v", h.Status)
		}
		return nil
	})
	oh := h.Status.OperationHistory
	after := time.Now().UTC()
	for _, op := range []string{wire.OperationRegister, wire.OperationInspect} {
		m := oh.Metric(op)
		if m.Start.IsZero() || m.End.IsZero() || m.End.Before(m.Start) {
			t.Errorf("%s: %+v, want start ≤ end, both set", op, m)
		}
		if m.Start.Before(before.Add(-time.Second)) || m.End.After(after) {
			t.Errorf("%s: %+v outside the test's run [%s, %s]", op, m, before, after)
		}
	}
	if oh.Inspect.Start.Before(oh.Register.End) {
		t.Errorf("inspect started %s before register ended %s", oh.Inspect.Start, oh.Register.End)
	}
	if oh.Provision != (wire.OperationMetric{}) || oh.Deprovision != (wire.OperationMetric{}) {
		t.Errorf("provision/deprovision set on a host never provisioned: %+v", oh)
	}

	mfs, err := r.a.cfg.Metrics.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]uint64{}
	for _, mf := range mfs {
		if mf.GetName() != "rackfence_agent_operation_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "operation" {
					counts[l.GetValue()] += m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	if counts[wire.OperationRegister] != 1 || counts[wire.OperationInspect] != 1 || counts[wire.OperationProvision] != 0 {
		t.Errorf("operation duration observations %v, want register 1, inspect 1", counts)
	}
}
