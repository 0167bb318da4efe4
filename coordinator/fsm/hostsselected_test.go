package fsm

import (
	"sort"

	"github.com/rackfence/rackfence/shared/wire"
)

// HostsSelected lists hosts sorted by name, filtered by rack and
// provisioning state when not empty (state "none" = no status yet) and by
// labels matching sel (nil matches every host); it returns the applied
// index the answer reflects.
func (f *FSM) HostsSelected(rack, pstate string, sel wire.Selector) ([]wire.Host, uint64) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	src := f.s.Hosts
	if rack != "" {
		r := f.s.Racks[rack]
		if r == nil {
			return []wire.Host{}, f.applied.Load()
		}
		src = r.Hosts
	}
	out := make([]wire.Host, 0, len(src))
	for _, h := range src {
		if pstate != "" {
			ps := "none"
			if h.Status != nil && h.Status.ProvisioningState != "" {
				ps = h.Status.ProvisioningState
			}
			if ps != pstate {
				continue
			}
		}
		if sel != nil && !sel.Matches(h.labels()) {
			continue
		}
		out = append(out, h.host())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, f.applied.Load()
}
