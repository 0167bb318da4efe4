package coordinator

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"maps"

	"github.com/hashicorp/raft"
)

// Snapshot format: one header line naming the format and its version, then
// a gzip stream of JSON values: snapMeta, then snapMeta.HostCount host
// records. Records are written one at a time so a snapshot of 100k hosts
// never sits in memory twice.
const (
	snapHeader  = "rackfence-snapshot"
	snapVersion = 1
)

type snapMeta struct {
	Applied   uint64               `json:"applied"`
	ClusterID string               `json:"clusterID"`
	Members   map[string]string    `json:"members"`
	Creds     map[string]credRec   `json:"creds"`
	Tokens    map[string]TokenInfo `json:"tokens"`
	Racks     map[string]rackRec   `json:"racks"`
	HostCount int                  `json:"hostCount"`
}

type fsmSnapshot struct {
	meta  snapMeta
	hosts []*hostRec
}

// snapshot captures the state: records are immutable, so copying the
// pointers is enough, and Persist runs concurrently with new Applies.
func (f *FSM) snapshot() *fsmSnapshot {
	f.mu.RLock()
	defer f.mu.RUnlock()
	s := &fsmSnapshot{meta: snapMeta{
		Applied:   f.applied.Load(),
		ClusterID: f.s.ClusterID,
		Members:   maps.Clone(f.s.Members),
		Creds:     maps.Clone(f.s.Creds),
		Tokens:    maps.Clone(f.s.Tokens),
		Racks:     make(map[string]rackRec, len(f.s.Racks)),
	}}
	for n, r := range f.s.Racks {
		c := *r
		c.Hosts = nil
		s.meta.Racks[n] = c
	}
	s.hosts = make([]*hostRec, 0, len(f.s.Hosts))
	for _, h := range f.s.Hosts {
		s.hosts = append(s.hosts, h)
	}
	s.meta.HostCount = len(s.hosts)
	return s
}

// writeTo writes the snapshot in the format above.
func (s *fsmSnapshot) writeTo(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	if _, err := fmt.Fprintf(bw, "%s %d\n", snapHeader, snapVersion); err != nil {
		return err
	}
	zw, err := gzip.NewWriterLevel(bw, gzip.BestSpeed)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(zw)
	if err := enc.Encode(&s.meta); err != nil {
		return err
	}
	for _, h := range s.hosts {
		if err := enc.Encode(h); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return bw.Flush()
}

// Persist writes the snapshot to raft's sink.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := s.writeTo(sink); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("write snapshot: %w", err)
	}
	return sink.Close()
}

// Release is a no-op: the snapshot holds only immutable records.
func (s *fsmSnapshot) Release() {}

// restore replaces the whole state with the snapshot in r.
func (f *FSM) restore(r io.Reader) error {
	br := bufio.NewReaderSize(r, 256<<10)
	line, err := br.ReadString('\n')
	if err != nil {
		return fmt.Errorf("read snapshot header: %w", err)
	}
	var name string
	var ver int
	if _, err := fmt.Sscanf(line, "%s %d\n", &name, &ver); err != nil || name != snapHeader {
		return fmt.Errorf("snapshot header %q is not %q", line, snapHeader)
	}
	if ver != snapVersion {
		return fmt.Errorf("%w: version %d", ErrSnapshotVersion, ver)
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return fmt.Errorf("snapshot body: %w", err)
	}
	dec := json.NewDecoder(zr)
	var meta snapMeta
	if err := dec.Decode(&meta); err != nil {
		return fmt.Errorf("snapshot meta: %w", err)
	}
	s := newState()
	s.ClusterID = meta.ClusterID
	if meta.Members != nil {
		s.Members = meta.Members
	}
	if meta.Creds != nil {
		s.Creds = meta.Creds
	}
	if meta.Tokens != nil {
		s.Tokens = meta.Tokens
	}
	for n, rr := range meta.Racks {
		c := rr
		c.Hosts = map[string]*hostRec{}
		s.Racks[n] = &c
	}
	for i := 0; i < meta.HostCount; i++ {
		h := &hostRec{}
		if err := dec.Decode(h); err != nil {
			return fmt.Errorf("snapshot host %d of %d: %w", i+1, meta.HostCount, err)
		}
		if h.Status != nil {
			st := internStatus(*h.Status)
			h.Status = &st
		}
		s.Hosts[h.Name] = h
		s.rack(h.Rack).Hosts[h.Name] = h
	}
	f.mu.Lock()
	f.s = s
	f.applied.Store(meta.Applied)
	f.mu.Unlock()
	f.wakeAll()
	return nil
}
