package direct

import (
	"context"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/provisioner"
)

// DayTwo returns the host's (reused) BMC session as a bmc.DayTwo: the
// agent's servicing (firmware updates) drives it directly, every mutation
// through the agent's guard.
func (p *Provisioner) DayTwo(ctx context.Context, h provisioner.Host) (bmc.DayTwo, error) {
	c, err := p.conn(ctx, h)
	if err != nil {
		return nil, p.done(h, err)
	}
	return c, nil
}
