package coordinator

import "github.com/prometheus/client_golang/prometheus"

// registerGate registers the version gate's and the divergence check's
// figures.
func registerGate(reg prometheus.Registerer, s *Store) {
	reg.MustRegister(s.divergence.mismatch, s.divergence.checks)
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "rackfence_fsm_stopped",
		Help: "1 when this member stopped applying the Raft log at an entry its binary does not know (upgrade it), 0 otherwise.",
	}, func() float64 {
		if s.fsm.Stopped() != nil {
			return 1
		}
		return 0
	}))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "rackfence_state_hash_index",
		Help: "Log index of this member's newest FSM state hash.",
	}, func() float64 {
		hs := s.fsm.StateHashes()
		if len(hs) == 0 {
			return 0
		}
		return float64(hs[len(hs)-1].Index)
	}))
}
