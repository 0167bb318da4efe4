package coordinator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// The leader reads every member's GET /v1/health each ProbeInterval: what
// its binary applies (recorded in Raft when it changed, for the version
// gate) and its recent state hashes (compared each HashCheckInterval,
// divergence.go).

// Defaults of the peer loop.
const (
	DefaultProbeInterval     = 10 * time.Second
	DefaultHashCheckInterval = time.Minute
)

// probe is one member's last health answer, and the leader's applied
// index when it came.
type probe struct {
	health  wire.Health
	err     error
	at      time.Time
	applied uint64
}

type probes struct {
	mu sync.Mutex
	m  map[string]probe
}

func (p *probes) get(id string) (probe, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.m[id]
	return v, ok
}

func (p *probes) set(id string, v probe) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]probe{}
	}
	p.m[id] = v
}

// Health is this member's GET /v1/health answer.
func (s *Store) Health() wire.Health {
	me := s.thisMember()
	h := wire.Health{Status: wire.HealthOK, Node: s.cfg.NodeID, State: s.State(), Version: me.Binary,
		Commands: me.Commands, StateHashes: s.fsm.StateHashes(), AppliedIndex: s.fsm.AppliedIndex()}
	if r := s.fsm.Stopped(); r != nil {
		h.Status = wire.HealthStopped
		h.Stopped = &wire.StopInfo{Index: r.Index, Type: r.Type, Version: r.Version, Message: r.Message}
	} else if p := s.logw.problem(); p != "" {
		h.Status, h.Reason = wire.HealthLogWriteFailing, p
	}
	return h
}

func (s *Store) peerLoop() {
	t := time.NewTicker(s.cfg.ProbeInterval)
	defer t.Stop()
	var lastCheck time.Time
	for {
		select {
		case <-t.C:
		case <-s.closing:
			return
		}
		if !s.Ready() {
			continue
		}
		s.probeMembers()
		if time.Since(lastCheck) >= s.cfg.HashCheckInterval {
			lastCheck = time.Now()
			s.checkHashes()
		}
	}
}

// probeMembers reads every member's health and records versions that
// changed.
func (s *Store) probeMembers() {
	s.refreshVoters()
	ms, err := s.Members()
	if err != nil {
		return
	}
	var wg sync.WaitGroup
	for _, m := range ms {
		if m.ID == s.cfg.NodeID {
			s.probes.set(m.ID, probe{health: s.Health(), at: time.Now(), applied: s.fsm.AppliedIndex()})
			continue
		}
		if m.HTTPAddr == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := s.fetchHealth(m.HTTPAddr)
			s.probes.set(m.ID, probe{health: h, err: err, at: time.Now(), applied: s.fsm.AppliedIndex()})
		}()
	}
	wg.Wait()
	for _, m := range ms {
		s.recordVersion(m.ID)
	}
}

func (s *Store) fetchHealth(base string) (wire.Health, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+"/v1/health", nil)
	if err != nil {
		return wire.Health{}, err
	}
	resp, err := s.cfg.PeerClient.Do(req)
	if err != nil {
		return wire.Health{}, err
	}
	defer resp.Body.Close()
	var h wire.Health
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&h); err != nil {
		return wire.Health{}, fmt.Errorf("health of %s: %w", base, err)
	}
	return h, nil
}

// recordVersion writes member id's version into Raft when its health
// answer differs from the record (a restart on a new binary; a member
// from before the gate answers without a table and is recorded as legacy
// if it had a newer record: a downgrade).
func (s *Store) recordVersion(id string) {
	p, ok := s.probes.get(id)
	if !ok || p.err != nil || p.health.Node != id {
		return
	}
	want := fsm.MemberVersion{Binary: p.health.Version, Commands: p.health.Commands}
	have, recorded := s.fsm.MemberVersion(id)
	if len(want.Commands) == 0 {
		if !recorded {
			return // legacy, and recorded as such by its absence
		}
		want = fsm.MemberVersion{Binary: fsm.LegacyVersion, Commands: fsm.WireCommands(fsm.LegacyVersions)}
	}
	if recorded && sameVersion(have, want) {
		return
	}
	addr := s.fsm.MemberHTTP(id)
	if addr == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.Apply(ctx, fsm.SetMemberCmd{ID: id, HTTPAddr: addr, Version: &want}); err != nil {
		s.log.Warn("could not record a member's version", "member", id, "version", want.Binary, "err", err)
		return
	}
	s.log.Info("member version recorded", "member", id, "version", want.Binary, "was", have.Binary, "missing", fsm.Missing(s.fsm.Commands(), fsm.Table(want.Commands)))
}

func sameVersion(a, b fsm.MemberVersion) bool {
	return a.Binary == b.Binary && maps.Equal(a.Commands, b.Commands)
}
