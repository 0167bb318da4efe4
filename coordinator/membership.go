package coordinator

import (
	"context"
	"fmt"
	"sort"

	"github.com/hashicorp/raft"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// Join adds a voter on the leader. The same ID at a new address, or a new
// ID at an address already in use, is removed first; the same ID at the
// same address is already a member and only its HTTP URL is refreshed.
func (s *Store) Join(ctx context.Context, req wire.JoinRequest) error {
	if !s.IsLeader() {
		return ErrNotLeader
	}
	cf := s.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return mapRaftErr(err)
	}
	id, addr := raft.ServerID(req.ID), raft.ServerAddress(req.RaftAddr)
	member := false
	for _, srv := range cf.Configuration().Servers {
		switch {
		case srv.ID == id && srv.Address == addr:
			member = true
		case srv.ID == id || srv.Address == addr:
			s.log.Info("removing a stale member before the join", "id", srv.ID, "raft", srv.Address)
			if err := s.raft.RemoveServer(srv.ID, 0, 0).Error(); err != nil {
				return fmt.Errorf("remove stale member %s: %w", srv.ID, mapRaftErr(err))
			}
		}
	}
	if !member {
		if err := s.raft.AddVoter(id, addr, 0, 0).Error(); err != nil {
			return fmt.Errorf("add voter %s at %s: %w", req.ID, req.RaftAddr, mapRaftErr(err))
		}
		s.log.Info("member joined", "id", req.ID, "raft", req.RaftAddr, "http", req.HTTPAddr)
	}
	s.refreshVoters() // the gate counts the new voter (as legacy until its version is recorded)
	_, err := s.Apply(ctx, fsm.SetMemberCmd{ID: req.ID, HTTPAddr: req.HTTPAddr})
	return err
}

// RemoveMember removes a server from the cluster.
func (s *Store) RemoveMember(ctx context.Context, id string) error {
	if !s.IsLeader() {
		return ErrNotLeader
	}
	cf := s.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return mapRaftErr(err)
	}
	found := false
	for _, srv := range cf.Configuration().Servers {
		if string(srv.ID) == id {
			found = true
		}
	}
	if !found {
		return notFound("no member with ID %s", id)
	}
	if err := s.raft.RemoveServer(raft.ServerID(id), 0, 0).Error(); err != nil {
		return fmt.Errorf("remove member %s: %w", id, mapRaftErr(err))
	}
	s.log.Info("member removed", "id", id)
	s.refreshVoters()
	if id == s.cfg.NodeID {
		return nil
	}
	_, err := s.Apply(ctx, fsm.RemoveMemberCmd{ID: id})
	return err
}

// Members lists the Raft configuration with each member's HTTP URL.
func (s *Store) Members() ([]wire.Member, error) {
	cf := s.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return nil, mapRaftErr(err)
	}
	_, lid := s.raft.LeaderWithID()
	out := []wire.Member{}
	for _, srv := range cf.Configuration().Servers {
		m := wire.Member{ID: string(srv.ID), RaftAddr: string(srv.Address), Suffrage: srv.Suffrage.String(), Leader: srv.ID == lid}
		m.HTTPAddr = s.fsm.MemberHTTP(m.ID)
		if m.ID == s.cfg.NodeID {
			m.HTTPAddr = s.cfg.HTTPURL
		}
		_, m.Version = s.fsm.MemberTable(m.ID)
		if p, ok := s.probes.get(m.ID); ok && p.err == nil && p.health.Stopped != nil {
			m.Stopped = p.health.Stopped.Message
		}
		if m.ID == s.cfg.NodeID {
			m.Version = binaryVersion()
			if r := s.fsm.Stopped(); r != nil {
				m.Stopped = r.Message
			}
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Status answers GET /v1/status (tier is filled in by the caller).
func (s *Store) Status() wire.ClusterStatus {
	ms, _ := s.Members()
	_, leader := s.Leader()
	st := s.State()
	out := wire.ClusterStatus{
		ClusterID: s.fsm.ClusterID(), NodeID: s.cfg.NodeID, State: st, Leader: leader,
		Members: ms, CommitIndex: s.raft.CommitIndex(), AppliedIndex: s.fsm.AppliedIndex(),
		RestoreGeneration: s.fsm.Generation(),
	}
	out.Upgrade = s.upgradeStatus()
	if s.IsLeader() {
		out.Upgrade.HashCheck = s.divergence.last()
		out.Warnings = s.divergence.warnings()
	}
	if r := s.fsm.Stopped(); r != nil {
		out.Warnings = append(out.Warnings, "this member stopped applying the Raft log: "+r.Message)
	}
	out.Warnings = append(out.Warnings, s.memberWarnings()...)
	return out
}
