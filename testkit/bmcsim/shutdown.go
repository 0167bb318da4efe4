package bmcsim

import "time"

// gracefulShutdown is what the simulated OS does on GracefulShutdown:
// power off at once, after Config.GracefulShutdownDelay, or never
// (Config.IgnoreGracefulShutdown). b.mu held.
func (s *Sim) gracefulShutdown(b *bmc, j int) {
	switch {
	case s.cfg.IgnoreGracefulShutdown:
	case s.cfg.GracefulShutdownDelay <= 0:
		b.powerOff(j)
	default:
		gen := b.sys[j].gen
		time.AfterFunc(s.cfg.GracefulShutdownDelay, func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			if b.sys[j].gen == gen && b.sys[j].power { // nothing changed it meanwhile
				b.powerOff(j)
			}
		})
	}
}
