package bmcsim

import "errors"

// Errors returned by Start and the Sim methods.
var (
	// ErrConfig: a Config field is out of range; the message names it.
	ErrConfig = errors.New("bmcsim: bad config")
	// ErrNoPorts: BasePort..BasePort+Hosts-1 could not all be bound.
	ErrNoPorts = errors.New("bmcsim: ports not available")
	// ErrIndex: a BMC index outside 0..Hosts-1.
	ErrIndex = errors.New("bmcsim: no such BMC index")
	// ErrFaultMode: a fault mode other than none, http500, hang, refuse-auth.
	ErrFaultMode = errors.New("bmcsim: unknown fault mode")
	// ErrKnobs: a Knobs field out of range; the message names it.
	ErrKnobs = errors.New("bmcsim: bad knobs")
)
