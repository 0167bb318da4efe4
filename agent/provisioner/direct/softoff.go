package direct

import (
	"context"
	"sync"
	"time"

	"github.com/rackfence/rackfence/agent/provisioner"
)

// softOffs remembers the hosts a graceful shutdown was sent to and that
// have not been seen off since, so polling does not press the power
// button again. A mark older than softMarkTTL is forgotten (a soft
// power-off withdrawn while under way must not keep a later one from
// being sent); an agent restart forgets them all: one more request then.
type softOffs struct {
	mu   sync.Mutex
	sent map[string]time.Time
}

// softMarkTTL bounds how long a sent graceful shutdown counts as under way.
const softMarkTTL = 10 * time.Minute

func (s *softOffs) was(host string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.sent[host]
	return ok && time.Since(at) < softMarkTTL
}

func (s *softOffs) mark(host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sent == nil {
		s.sent = map[string]time.Time{}
	}
	s.sent[host] = time.Now()
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
