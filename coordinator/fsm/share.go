package fsm

import (
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// Beyond single strings (intern.go), whole parts of a status repeat across
// a fleet: every host of one BMC model reports the same BMC details, the
// same CPUs, disks and firmware, and the same Extra map once available
// ({"node": "ready"}). Records are immutable (state.go), so hosts whose
// parts are equal can point at one copy; sharing changes no value, hence
// nothing of the log, snapshots, the state hash or any read, and Apply
// stays deterministic.
//
// Caveat: a shared part must never be modified in place, by the FSM or by
// a reader (the rule for every nested pointer of a record already); a map
// or slice a reader wants to change must be copied first.

// shareCap bounds each table: when a table is full it is emptied and
// starts again, so values that never repeat (an Extra map carrying a
// retry time) cost at most a restart of sharing, never unbounded memory.
const shareCap = 4096

// shared is one table of canonical values, keyed by a partKey's bytes.
type shared[V any] struct {
	mu sync.Mutex // restore decodes snapshot chunks concurrently
	m  map[string]V
}

// lookup returns the value stored under k (no allocation).
func (s *shared[V]) lookup(k partKey) (V, bool) {
	if !shareParts {
		var zero V
		return zero, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[string(k)]
	return v, ok
}

// store keeps v under k and returns it.
func (s *shared[V]) store(k partKey, v V) V {
	if !shareParts {
		return v
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil || len(s.m) >= shareCap {
		s.m = map[string]V{}
	}
	s.m[string(k)] = v
	return v
}

// shareParts switches sharing off for tests that compare a state built
// with it against one built without.
var shareParts = true

// The tables, one per kind of part.
var (
	sharedBMC      shared[*wire.BMCDetails]
	sharedCPUs     shared[[]wire.CPU]
	sharedDisks    shared[[]wire.Disk]
	sharedFirmware shared[[]wire.Firmware]
	sharedAccel    shared[[]wire.Accelerator]
	sharedExtra    shared[map[string]string]
	sharedHealth   shared[*wire.HardwareHealth]
	sharedComps    shared[map[string]string]
)

// partKey is the key of a part: every field, strings length-prefixed and
// numbers terminated, so no two different parts have the same key. Built
// in a caller's stack buffer (keyBuf) it allocates nothing unless long.
type partKey []byte

// keyBuf is the size of the stack buffer a key starts in.
const keyBuf = 256

func (k partKey) str(s string) partKey {
	k = append(strconv.AppendInt(k, int64(len(s)), 10), ':')
	return append(k, s...)
}

func (k partKey) num(n int64) partKey { return append(strconv.AppendInt(k, n, 10), ';') }

// shareBMC returns BMC details equal to b (interned), shared with every
// host whose details are equal.
func shareBMC(b *wire.BMCDetails) *wire.BMCDetails {
	var buf [keyBuf]byte
	k := partKey(buf[:0]).str(b.Protocol).str(b.RedfishVersion).str(b.Vendor).str(b.Model).
		str(b.FirmwareVersion).str(b.Auth).str(b.System).str(b.Manager).str(b.VirtualMedia).str(b.VirtualMediaMethod)
	if b.BootModes == nil {
		k = k.num(-1) // nil and empty both read as absent; kept apart all the same
	} else {
		k = k.num(int64(len(b.BootModes)))
	}
	for _, m := range b.BootModes {
		k = k.str(m)
	}
	k = k.num(int64(len(b.Problems)))
	for _, p := range b.Problems {
		k = k.str(p)
	}
	if v, ok := sharedBMC.lookup(k); ok {
		return v
	}
	return sharedBMC.store(k, internBMC(b))
}

func shareCPUs(cs []wire.CPU) []wire.CPU {
	var buf [keyBuf]byte
	k := partKey(buf[:0])
	for _, c := range cs {
		k = k.str(c.Model).num(int64(c.Cores)).num(int64(c.Threads))
	}
	if v, ok := sharedCPUs.lookup(k); ok {
		return v
	}
	out := append([]wire.CPU(nil), cs...)
	for i := range out {
		out[i].Model = in(out[i].Model)
	}
	return sharedCPUs.store(k, out)
}

func shareDisks(ds []wire.Disk) []wire.Disk {
	var buf [keyBuf]byte
	k := partKey(buf[:0])
	for _, d := range ds {
		k = k.str(d.Name).str(d.Model).num(d.SizeBytes).str(d.Type)
	}
	if v, ok := sharedDisks.lookup(k); ok {
		return v
	}
	out := append([]wire.Disk(nil), ds...)
	for i := range out {
		out[i].Name, out[i].Model, out[i].Type = in(out[i].Name), in(out[i].Model), in(out[i].Type)
	}
	return sharedDisks.store(k, out)
}

func shareFirmware(fs []wire.Firmware) []wire.Firmware {
	var buf [keyBuf]byte
	k := partKey(buf[:0])
	for _, f := range fs {
		k = k.str(f.Name).str(f.Version)
	}
	if v, ok := sharedFirmware.lookup(k); ok {
		return v
	}
	out := append([]wire.Firmware(nil), fs...)
	for i := range out {
		out[i].Name, out[i].Version = in(out[i].Name), in(out[i].Version)
	}
	return sharedFirmware.store(k, out)
}

func shareAccelerators(as []wire.Accelerator) []wire.Accelerator {
	var buf [keyBuf]byte
	k := partKey(buf[:0])
	for _, a := range as {
		k = k.str(a.Name).str(a.Type).str(a.Model)
	}
	if v, ok := sharedAccel.lookup(k); ok {
		return v
	}
	out := append([]wire.Accelerator(nil), as...)
	for i := range out {
		a := &out[i]
		a.Name, a.Type, a.Model = in(a.Name), in(a.Type), in(a.Model)
	}
	return sharedAccel.store(k, out)
}

// shareExtra returns a map equal to m (keys and values interned), shared
// with every host whose Extra is equal. An empty map is not shared (nor
// made nil: the record keeps what was applied).
func shareExtra(m map[string]string) map[string]string { return shareMap(&sharedExtra, m) }

// shareMap returns a map equal to m (keys and values interned), shared
// through tab with every equal one; an empty map is a new empty map.
func shareMap(tab *shared[map[string]string], m map[string]string) map[string]string {
	if len(m) == 0 {
		return map[string]string{}
	}
	var buf [keyBuf]byte
	k := mapKey(partKey(buf[:0]), m)
	if v, ok := tab.lookup(k); ok {
		return v
	}
	out := make(map[string]string, len(m))
	for key, v := range m {
		out[in(key)] = in(v)
	}
	return tab.store(k, out)
}

// mapKey appends m's pairs in key order (no count: a caller that must
// tell nil from empty adds one).
func mapKey(k partKey, m map[string]string) partKey {
	var kbuf [8]string
	keys := kbuf[:0]
	for key := range m {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		k = k.str(key).str(m[key])
	}
	return k
}

// shareHealth returns hardware health equal to h. Its components map is
// shared with every host whose components are equal (every host of a
// healthy fleet: one verdict per kind of component); the whole value is
// shared too when its Since is a plain UTC time (as every report's is:
// the agent stamps it in UTC, to the second, and keeps it while the
// verdict holds), so hosts whose health changed in the same second share
// one. A Since in another location or with a monotonic reading keeps its
// own copy: equal instants would read differently.
func shareHealth(h *wire.HardwareHealth) *wire.HardwareHealth {
	var buf [keyBuf]byte
	k := partKey(buf[:0]).str(h.Health)
	if h.Components == nil {
		k = k.num(-1)
	} else {
		k = mapKey(k.num(int64(len(h.Components))), h.Components)
	}
	if h.Problems == nil {
		k = k.num(-1)
	} else {
		k = k.num(int64(len(h.Problems)))
	}
	for _, p := range h.Problems {
		k = k.str(p)
	}
	whole := h.Since.Location() == time.UTC && h.Since == h.Since.Round(0)
	if whole {
		k = k.num(h.Since.Unix()).num(int64(h.Since.Nanosecond()))
		if v, ok := sharedHealth.lookup(k); ok {
			return v
		}
	}
	c := *h
	c.Health = in(c.Health)
	if len(c.Components) > 0 {
		c.Components = shareMap(&sharedComps, c.Components)
	}
	if len(c.Problems) > 0 {
		c.Problems = append([]string(nil), c.Problems...)
		for i := range c.Problems {
			c.Problems[i] = in(c.Problems[i])
		}
	}
	if whole {
		return sharedHealth.store(k, &c)
	}
	return &c
}
