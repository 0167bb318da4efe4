package fsm

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"runtime"
	"sync"
)

// Snapshot format: one header line naming the format and its version, then
// a gzip stream.
//
//	version 1: JSON values: snapMeta, then snapMeta.HostCount host records.
//	version 2 (written now): snapMeta as one JSON line, then chunks of at
//	most snapChunk hosts, each a uvarint length and an independent gob
//	stream, so a restore decodes chunks on every core.
//
// Hosts are written chunk by chunk so a snapshot of 100k hosts never sits
// in memory twice. Restore reads both versions.
const (
	snapHeader  = "rackfence-snapshot"
	snapVersion = 2
	snapChunk   = 2048
)

type snapMeta struct {
	Applied   uint64               `json:"applied"`
	ClusterID string               `json:"clusterID"`
	Members   map[string]string    `json:"members"`
	Creds     map[string]credRec   `json:"creds"`
	Tokens    map[string]TokenInfo `json:"tokens"`
	Racks     map[string]rackRec   `json:"racks"`
	HostCount int                  `json:"hostCount"`
	// Versions is the member version table (absent before the gate; an
	// older binary ignores it).
	Versions map[string]MemberVersion `json:"versions,omitempty"`

	// Generation is the restore generation (epoch.go); absent before
	// 2026-11-24 and in never-restored clusters.
	Generation uint64 `json:"generation,omitempty"`
}

// Snapshot is a captured state: Encode writes it in the format above.
type Snapshot struct {
	meta  snapMeta
	hosts []*hostEntry
}

// snapshot captures the state: records are immutable, so copying the
// pointers is enough, and Encode runs concurrently with new Applies.
func (f *FSM) snapshot() *Snapshot {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.snapshotLocked()
}

// snapshotLocked is snapshot with f.mu already held.
func (f *FSM) snapshotLocked() *Snapshot {
	s := &Snapshot{meta: snapMeta{
		Applied:   f.applied.Load(),
		ClusterID: f.s.ClusterID,
		Members:   maps.Clone(f.s.Members),
		Creds:     maps.Clone(f.s.Creds),
		Tokens:    maps.Clone(f.s.Tokens),
		Racks:     make(map[string]rackRec, len(f.s.Racks)),
		Versions:  maps.Clone(f.s.Versions),
	}}
	s.meta.Generation = f.s.Generation
	for n, r := range f.s.Racks {
		c := *r
		c.Hosts = nil
		s.meta.Racks[n] = c
	}
	s.hosts = make([]*hostEntry, 0, len(f.s.Hosts))
	for _, h := range f.s.Hosts {
		s.hosts = append(s.hosts, h)
	}
	s.meta.HostCount = len(s.hosts)
	return s
}

// Encode writes the snapshot in the format above.
func (s *Snapshot) Encode(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	if _, err := fmt.Fprintf(bw, "%s %d\n", snapHeader, snapVersion); err != nil {
		return err
	}
	zw, err := gzip.NewWriterLevel(bw, gzip.BestSpeed)
	if err != nil {
		return err
	}
	if err := json.NewEncoder(zw).Encode(&s.meta); err != nil {
		return err
	}
	var chunk bytes.Buffer
	var lenBuf [binary.MaxVarintLen64]byte
	for i := 0; i < len(s.hosts); i += snapChunk {
		end := min(i+snapChunk, len(s.hosts))
		chunk.Reset()
		enc := gob.NewEncoder(&chunk)
		for _, h := range s.hosts[i:end] {
			if err := encodeHost(enc, h); err != nil {
				return fmt.Errorf("encode host %s: %w", h.Name, err)
			}
		}
		n := binary.PutUvarint(lenBuf[:], uint64(chunk.Len()))
		if _, err := zw.Write(lenBuf[:n]); err != nil {
			return err
		}
		if _, err := zw.Write(chunk.Bytes()); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return bw.Flush()
}

// Restore replaces the whole state with the snapshot in r (either
// format version).
func (f *FSM) Restore(r io.Reader) error {
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
	if ver != 1 && ver != 2 {
		return fmt.Errorf("%w: version %d", ErrSnapshotVersion, ver)
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return fmt.Errorf("snapshot body: %w", err)
	}
	zbr := bufio.NewReaderSize(zr, 256<<10)
	var meta snapMeta
	var hosts []*hostEntry
	if ver == 1 {
		dec := json.NewDecoder(zbr)
		if err := dec.Decode(&meta); err != nil {
			return fmt.Errorf("snapshot meta: %w", err)
		}
		hosts = make([]*hostEntry, 0, meta.HostCount)
		for i := 0; i < meta.HostCount; i++ {
			h := &hostFull{}
			if err := dec.Decode(h); err != nil {
				return fmt.Errorf("snapshot host %d of %d: %w", i+1, meta.HostCount, err)
			}
			rec := recOf(h)
			internRec(rec)
			hosts = append(hosts, entryOf(rec))
		}
	} else {
		line, err := zbr.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("snapshot meta: %w", err)
		}
		if err := json.Unmarshal(line, &meta); err != nil {
			return fmt.Errorf("snapshot meta: %w", err)
		}
		if hosts, err = readChunks(zbr, meta.HostCount); err != nil {
			return err
		}
	}
	s := newState()
	s.ClusterID = meta.ClusterID
	s.Generation = meta.Generation
	if meta.Members != nil {
		s.Members = meta.Members
	}
	if meta.Creds != nil {
		s.Creds = meta.Creds
	}
	if meta.Versions != nil {
		s.Versions = meta.Versions
	}
	for hash, info := range meta.Tokens {
		s.putToken(hash, info) // snapshots before 2026-11-23 carry no IDs
	}
	for n, rr := range meta.Racks {
		c := rr
		c.Hosts = map[string]*hostEntry{}
		s.Racks[n] = &c
	}
	for _, h := range hosts {
		s.Hosts[h.Name] = h
		s.rack(h.Rack).Hosts[h.Name] = h
	}
	fc := countFleet(s.Hosts)
	f.mu.Lock()
	f.s = s
	f.fleet = fc
	f.applied.Store(meta.Applied)
	f.hashes.restored(meta.Applied)
	f.versionsGen.Add(1)
	f.mu.Unlock()
	f.wakeAll()
	return nil
}

// readChunks reads the version 2 host chunks and decodes them on every
// core; the order of hosts does not matter.
func readChunks(r *bufio.Reader, count int) ([]*hostEntry, error) {
	type result struct {
		hosts []*hostEntry
		err   error
	}
	work := make(chan []byte, runtime.GOMAXPROCS(0))
	results := make(chan result, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				dec := gob.NewDecoder(bytes.NewReader(b))
				var out []*hostEntry
				var err error
				for {
					h := &hostFull{}
					if e := dec.Decode(h); e == io.EOF {
						break
					} else if e != nil {
						err = fmt.Errorf("snapshot chunk: %w", e)
						break
					}
					rec := recOf(h)
					internRec(rec)
					out = append(out, entryOf(rec))
				}
				results <- result{out, err}
			}
		}()
	}
	var readErr error
	go func() {
		defer close(work)
		for read := 0; ; read++ {
			n, err := binary.ReadUvarint(r)
			if err == io.EOF {
				return
			}
			if err != nil || n > 1<<31 {
				readErr = fmt.Errorf("snapshot chunk %d: bad length: %v", read, err)
				return
			}
			b := make([]byte, n)
			if _, err := io.ReadFull(r, b); err != nil {
				readErr = fmt.Errorf("snapshot chunk %d truncated: %w", read, err)
				return
			}
			work <- b
		}
	}()
	go func() { wg.Wait(); close(results) }()
	hosts := make([]*hostEntry, 0, count)
	var err error
	for res := range results {
		if res.err != nil && err == nil {
			err = res.err
		}
		hosts = append(hosts, res.hosts...)
	}
	if err == nil {
		err = readErr
	}
	if err == nil && len(hosts) != count {
		err = fmt.Errorf("snapshot holds %d hosts, its header says %d", len(hosts), count)
	}
	return hosts, err
}
