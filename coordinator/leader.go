package coordinator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// AdminTokenFile is the file, in the data dir, where the first bootstrap
// writes the admin token (mode 0600).
const AdminTokenFile = "admin.token"

// NewToken returns a random API token (32 bytes, hex) and its stored hash.
func NewToken() (token, hash string) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	token = hex.EncodeToString(b)
	return token, fsm.HashToken(token)
}

func (s *Store) leaderLoop() {
	for {
		select {
		case isLeader := <-s.notifyCh:
			g := s.gen.Add(1)
			s.ready.Store(false)
			s.timers.stopAll()
			if isLeader {
				s.log.Info("this node became the leader", "node", s.cfg.NodeID)
				go s.takeOver(g)
			} else {
				s.log.Info("this node is no longer the leader", "node", s.cfg.NodeID)
			}
		case <-s.closing:
			return
		}
	}
}

// takeOver runs once per leadership: barrier (so the FSM has everything
// the previous leader committed), record our HTTP URL, initialise a new
// cluster, re-arm every lease with a full TTL + margin, then serve reads.
func (s *Store) takeOver(g uint64) {
	current := func() bool { return s.gen.Load() == g && s.IsLeader() }
	for current() {
		if err := s.raft.Barrier(30 * time.Second).Error(); err == nil {
			break
		} else {
			s.log.Warn("leader barrier failed; retrying", "err", err)
			time.Sleep(200 * time.Millisecond)
		}
	}
	if !current() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.Apply(ctx, fsm.NoopCmd{Node: s.cfg.NodeID}); err != nil {
		s.log.Warn("leader no-op failed", "err", err)
		return
	}
	if have, _ := s.fsm.MemberVersion(s.cfg.NodeID); s.fsm.MemberHTTP(s.cfg.NodeID) != s.cfg.HTTPURL || !sameVersion(have, s.thisMember()) {
		me := s.thisMember()
		if _, err := s.Apply(ctx, fsm.SetMemberCmd{ID: s.cfg.NodeID, HTTPAddr: s.cfg.HTTPURL, Version: &me}); err != nil {
			s.log.Warn("could not record this node's HTTP URL and version", "err", err)
		}
	}
	if s.fsm.ClusterID() == "" {
		if err := s.initCluster(ctx); err != nil {
			s.log.Error("could not initialise the new cluster", "err", err)
		}
	}
	if !current() {
		return
	}
	s.timers.armAll(s.fsm.Leases())
	s.refreshVoters()
	s.ready.Store(true)
	go s.probeMembers() // record the other members' versions now, not in ProbeInterval
	s.log.Info("leader ready", "node", s.cfg.NodeID, "appliedIndex", s.fsm.AppliedIndex())
}

// initCluster generates the cluster ID and the admin token, writes the
// token to DATA/admin.token (0600) and applies both.
func (s *Store) initCluster(ctx context.Context) error {
	idb := make([]byte, 8)
	if _, err := rand.Read(idb); err != nil {
		return err
	}
	token, hash := NewToken()
	path := filepath.Join(s.cfg.DataDir, AdminTokenFile)
	if err := os.WriteFile(path, []byte(wire.FormatToken(token, s.cfg.TokenPin)+"\n"), 0o600); err != nil {
		return fmt.Errorf("write admin token to %s: %w", path, err)
	}
	v, err := s.Apply(ctx, fsm.InitCmd{ClusterID: hex.EncodeToString(idb), AdminTokenHash: hash, Time: time.Now().UTC()})
	if err != nil || v != true {
		os.Remove(path)
		if err == nil {
			err = errors.New("cluster was already initialised")
		}
		return err
	}
	s.log.Info("new cluster initialised; admin token written", "clusterID", s.fsm.ClusterID(), "path", path)
	return nil
}
