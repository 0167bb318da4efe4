package pki

// Renewals counts successful renewals by RenewLoop.
func (h *Holder) Renewals() int64 { return h.renewals.Load() }
