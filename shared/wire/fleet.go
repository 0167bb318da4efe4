package wire

// FleetWatchResponse answers GET /v1/watch?index= without rack= (any
// role but agent): one entry per rack changed after the requested index,
// sorted by rack name. Index 0 answers every rack with every host at once.
// Follow Index from answer to answer as with a rack watch.
type FleetWatchResponse struct {
	Index uint64      `json:"index"`
	Racks []RackWatch `json:"racks"`
}

// RackWatch is one rack's changes in a FleetWatchResponse; Hosts, Deleted,
// Reset and Lease mean what they mean in WatchResponse.
type RackWatch struct {
	Rack    string   `json:"rack"`
	Hosts   []Host   `json:"hosts"`
	Deleted []string `json:"deleted,omitempty"`
	Reset   bool     `json:"reset,omitempty"`
	Lease   *Lease   `json:"lease,omitempty"`
	// ExpiresIn is how long the lease has left on the leader's expiry
	// clock when the answer was made (absent when the rack is free or the
	// answering member does not lead).
	ExpiresIn *Duration `json:"expiresIn,omitempty"`
}

// WhoAmI answers GET /v1/whoami: who the bearer token names.
type WhoAmI struct {
	Name string `json:"name"`
	Role string `json:"role"`
	Rack string `json:"rack,omitempty"`
}
