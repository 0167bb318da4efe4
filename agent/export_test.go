package agent

// Synced reports whether the agent holds the lease and applied its first
// watch answer (the in-process tests wait for it).
func (a *Agent) Synced() bool {
	s := a.cur.Load()
	if s == nil {
		return false
	}
	select {
	case <-s.synced:
		return true
	default:
		return false
	}
}
