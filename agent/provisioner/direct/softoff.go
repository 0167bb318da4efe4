package direct

import (
	"context"
	"sync"

	"github.com/rackfence/rackfence/agent/provisioner"
)

// softOffs remembers the hosts a graceful shutdown was sent to and that
// have not been seen off since, so polling does not press the power
// button again (an agent restart forgets it: one more request then).
type softOffs struct {
	mu   sync.Mutex
	sent map[string]bool
}

func (s *softOffs) was(host string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent[host]
}

func (s *softOffs) mark(host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sent == nil {
		s.sent = map[string]bool{}
	}
	s.sent[host] = true
}

func (s *softOffs) forget(host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sent, host)
}

// SoftPowerOff asks the OS to shut down (Redfish GracefulShutdown, IPMI
// chassis power soft) once, then reports InProgress until the BMC reads
// the host off.
func (p *Provisioner) SoftPowerOff(ctx context.Context, h provisioner.Host) (provisioner.Result, error) {
	c, err := p.conn(ctx, h)
	if err != nil {
		return provisioner.Result{}, p.done(h, err)
	}
	on, err := c.PowerState(ctx)
	if err != nil {
		return provisioner.Result{}, p.done(h, err)
	}
	if !on {
		p.soft.forget(h.Name)
		return provisioner.Result{PoweredOn: boolp(false), Message: "powered off by a graceful shutdown"}, nil
	}
	if !p.soft.was(h.Name) {
		if err := c.SoftPowerOff(ctx, p.guard, h.Name); err != nil {
			return provisioner.Result{}, p.done(h, err)
		}
		p.soft.mark(h.Name)
		p.log.Info("graceful shutdown requested", "host", h.Name, "protocol", c.Protocol())
		// An OS (or BMC) that powers off at once needs no second poll.
		if on, err = c.PowerState(ctx); err == nil && !on {
			p.soft.forget(h.Name)
			return provisioner.Result{PoweredOn: boolp(false), Message: "powered off by a graceful shutdown"}, nil
		}
	}
	return provisioner.Result{PoweredOn: boolp(true), InProgress: true, Message: "graceful shutdown requested; waiting for the host to power off"}, nil
}
