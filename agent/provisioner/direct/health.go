package direct

import (
	"context"

	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
)

var _ provisioner.HealthReader = (*Provisioner)(nil)

// ReadHealth reads the host's hardware health from its Redfish BMC
// (bmc.Conn.Health); an IPMI BMC reports none (nil, no error).
func (p *Provisioner) ReadHealth(ctx context.Context, h provisioner.Host) (*wire.HardwareHealth, []provisioner.HealthReading, error) {
	c, err := p.conn(ctx, h)
	if err != nil {
		return nil, nil, p.done(h, err)
	}
	if c.Protocol() != "redfish" {
		return nil, nil, nil
	}
	r, err := c.Health(ctx)
	if err != nil {
		return nil, nil, p.done(h, err)
	}
	out := make([]provisioner.HealthReading, len(r.Readings))
	for i, x := range r.Readings {
		out[i] = provisioner.HealthReading{Kind: x.Kind, Name: x.Name, Value: x.Value}
	}
	return r.Health, out, nil
}
