package coordinator

import (
	"time"

	"github.com/hashicorp/raft"
)

// ElectionTime is how long electing a new leader can take with this
// configuration's Raft timeouts (hashicorp/raft's defaults where unset):
// a follower gives up on a silent leader after one to two heartbeat
// timeouts (raft randomises the wait), and a candidate wins after one to
// two election timeouts when the vote is not split. With the defaults
// (1 s, 1 s) it is 4 s. A member forwarding to a leader that stopped
// answering learns within this time whether another one took over.
func (c Config) ElectionTime() time.Duration {
	d := raft.DefaultConfig()
	hb, el := d.HeartbeatTimeout, d.ElectionTimeout
	if c.HeartbeatTimeout > 0 {
		hb = c.HeartbeatTimeout
	}
	if c.ElectionTimeout > 0 {
		el = c.ElectionTimeout
	}
	return 2*hb + 2*el
}
