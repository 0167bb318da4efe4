package agent

import (
	"context"
	"math/rand/v2"
	"reflect"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rackfence/rackfence/agent/hoststate"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/wire"
)

// Hardware health: read from a registered Redfish host's BMC every
// HealthInterval (jittered; the first right after registration), at a
// pace of its own rather than the status refresh's (a short refresh keeps
// the coordinator's view fresh and costs the BMCs nothing); the verdict
// goes in the status (wire.HostStatus.Health: written only when it
// changes), the readings in the agent's metrics. A host about to be
// inspected is read right after its inspection, not before it.

// readHealth reads name's health when it is due and puts it in d's
// status. A failed read keeps the last verdict (logged, counted); the next
// is tried a HealthInterval later.
func (s *session) readHealth(name string, cur *hostEntry, h wire.Host, d *hoststate.Decision) {
	hr, ok := s.a.cfg.Provisioner.(provisioner.HealthReader)
	st := &d.Status
	if !ok || d.Remove || h.DeletionRequested || st.BMCDetails == nil || st.BMCDetails.Protocol != "redfish" ||
		st.OperationalStatus == wire.OpDetached {
		return
	}
	if d.Action == hoststate.ActionInspect && st.ErrorCount == 0 {
		// About to be inspected: the read follows the inspection, which
		// leaves the system document on the BMC session for it (one read
		// instead of three). A failed inspection (ErrorCount) waits for
		// nothing.
		return
	}
	now := time.Now()
	due := false
	s.store.withEntry(name, cur, func(e *hostEntry) {
		if e.healthAt.IsZero() && st.Health != nil {
			// A new session: spread the reads of hosts already read over
			// one period instead of reading them all at once.
			e.healthAt = now.Add(time.Duration(rand.Float64() * float64(s.a.cfg.HealthInterval)))
		}
		if now.Before(e.healthAt) {
			return
		}
		due = true
		e.healthAt = now.Add(jitter(s.a.cfg.HealthInterval, 0.2))
	})
	if !due {
		return
	}
	if _, ok := s.a.cfg.Holder.Valid(0); !ok {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.a.cfg.ActionTimeout)
	defer cancel()
	ph := provisioner.Host{Name: h.Name, BMC: h.BMC, BootMACAddress: h.BootMACAddress}
	if h.BMC.Credentials != "" {
		u, p, err := s.a.creds.get(ctx, h.BMC.Credentials)
		if err != nil {
			s.a.cfg.Metrics.healthReads.WithLabelValues("error").Inc()
			s.log.Debug("health not read: credentials", "host", name, "err", err.Error())
			return
		}
		ph.Username, ph.Password = u, p
	}
	hh, readings, err := hr.ReadHealth(ctx, ph)
	if err != nil {
		s.a.cfg.Metrics.healthReads.WithLabelValues("error").Inc()
		s.log.Warn("hardware health not read; keeping the last verdict", "host", name, "err", err.Error())
		return
	}
	if hh == nil {
		return
	}
	s.a.cfg.Metrics.healthReads.WithLabelValues("ok").Inc()
	if prev := st.Health; prev != nil && sameVerdict(prev, hh) {
		hh.Since = prev.Since
	} else {
		hh.Since = now.UTC().Truncate(time.Second)
		if prev != nil {
			s.log.Info("hardware health changed", "host", name, "health", hh.Health, "was", prev.Health, "problems", hh.Problems)
		}
	}
	st.Health = hh
	maxT, hasT := 0.0, false
	for _, r := range readings {
		if r.Kind == wire.HealthTemperature && (!hasT || r.Value > maxT) {
			maxT, hasT = r.Value, true
		}
	}
	s.store.withEntry(name, cur, func(e *hostEntry) { e.maxTemp, e.hasTemp = maxT, hasT })
}

// sameVerdict: a and b say the same (Since aside).
func sameVerdict(a, b *wire.HardwareHealth) bool {
	return a.Health == b.Health && reflect.DeepEqual(a.Components, b.Components) && reflect.DeepEqual(a.Problems, b.Problems)
}

// Health metrics, computed at scrape time from the session's hosts:
// bounded labels (health, component kind), never a host name.
var (
	healthHostsDesc = prometheus.NewDesc("rackfence_agent_hosts_health",
		"Hosts of the rack by hardware health as their BMC reports it (OK, Warning, Critical, Unknown); hosts not read yet are not counted.", []string{"health"}, nil)
	healthComponentsDesc = prometheus.NewDesc("rackfence_agent_hardware_components",
		"Hosts of the rack by the worst health of a kind of component (system, chassis, temperature, fan, powerSupply, storage).", []string{"kind", "health"}, nil)
	tempMaxDesc = prometheus.NewDesc("rackfence_agent_temperature_max_celsius",
		"The hottest temperature sensor reading among the rack's hosts at their last health read (absent when none reports one).", nil, nil)
	tempHistDesc = prometheus.NewDesc("rackfence_agent_host_temperature_celsius",
		"Hosts by their hottest temperature sensor reading at their last health read.", nil, nil)
)

// tempBuckets are the buckets of rackfence_agent_host_temperature_celsius.
var tempBuckets = []float64{30, 40, 50, 60, 70, 80, 90, 100}

// healthCounts is what the collector reports.
type healthCounts struct {
	hosts      map[string]int
	components map[[2]string]int
	temps      []float64
}

// healthCounts counts the store's hosts by health.
func (s *store) healthCounts() healthCounts {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := healthCounts{hosts: map[string]int{}, components: map[[2]string]int{}}
	for _, e := range s.hosts {
		if e.status == nil || e.status.Health == nil {
			continue
		}
		c.hosts[e.status.Health.Health]++
		for k, v := range e.status.Health.Components {
			c.components[[2]string{k, v}]++
		}
		if e.hasTemp {
			c.temps = append(c.temps, e.maxTemp)
		}
	}
	return c
}

func describeHealth(ch chan<- *prometheus.Desc) {
	ch <- healthHostsDesc
	ch <- healthComponentsDesc
	ch <- tempMaxDesc
	ch <- tempHistDesc
}

func collectHealth(ch chan<- prometheus.Metric, s *store) {
	c := s.healthCounts()
	for _, h := range wire.HardwareHealths {
		ch <- prometheus.MustNewConstMetric(healthHostsDesc, prometheus.GaugeValue, float64(c.hosts[h]), h)
	}
	for k, n := range c.components {
		ch <- prometheus.MustNewConstMetric(healthComponentsDesc, prometheus.GaugeValue, float64(n), k[0], k[1])
	}
	if len(c.temps) == 0 {
		return
	}
	maxT, sum := c.temps[0], 0.0
	counts := make(map[float64]uint64, len(tempBuckets))
	for _, t := range c.temps {
		maxT = max(maxT, t)
		sum += t
		for _, b := range tempBuckets {
			if t <= b {
				counts[b]++
			}
		}
	}
	ch <- prometheus.MustNewConstMetric(tempMaxDesc, prometheus.GaugeValue, maxT)
	ch <- prometheus.MustNewConstHistogram(tempHistDesc, uint64(len(c.temps)), sum, counts)
}
