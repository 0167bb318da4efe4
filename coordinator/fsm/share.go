package fsm

import (
	"slices"
	"strconv"
	"sync"

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

// shared is one table of canonical values by key.
type shared[K comparable, V any] struct {
	mu sync.Mutex // restore decodes snapshot chunks concurrently
	m  map[K]V
}

// get returns the value stored under k, else stores and returns make().
func (s *shared[K, V]) get(k K, make func() V) V {
	if !shareParts {
		return make()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.m[k]; ok {
		return v
	}
	if s.m == nil || len(s.m) >= shareCap {
		s.m = map[K]V{}
	}
	v := make()
	s.m[k] = v
	return v
}

// shareParts switches sharing off for tests that compare a state built
// with it against one built without.
var shareParts = true

// The tables, one per kind of part.
var (
	sharedBMC      shared[bmcKey, *wire.BMCDetails]
	sharedCPUs     shared[string, []wire.CPU]
	sharedDisks    shared[string, []wire.Disk]
	sharedFirmware shared[string, []wire.Firmware]
	sharedAccel    shared[string, []wire.Accelerator]
	sharedExtra    shared[string, map[string]string]
)

// bmcKey is BMCDetails as a comparable value, its lists as partKeys.
type bmcKey struct {
	protocol, redfishVersion, vendor, model, firmwareVersion, auth string
	system, manager, virtualMedia, virtualMediaMethod              string
	bootModes, problems                                            string
	nilBootModes                                                   bool
}

// shareBMC returns BMC details equal to b (interned), shared with every
// host whose details are equal.
func shareBMC(b *wire.BMCDetails) *wire.BMCDetails {
	var modes, problems partKey
	for _, m := range b.BootModes {
		modes = modes.str(m)
	}
	for _, p := range b.Problems {
		problems = problems.str(p)
	}
	k := bmcKey{b.Protocol, b.RedfishVersion, b.Vendor, b.Model, b.FirmwareVersion, b.Auth,
		b.System, b.Manager, b.VirtualMedia, b.VirtualMediaMethod,
		string(modes), string(problems), b.BootModes == nil}
	return sharedBMC.get(k, func() *wire.BMCDetails { return internBMC(b) })
}

// partKey builds the key of a list part: every field of every element,
// strings length-prefixed so no two different lists share a key.
type partKey []byte

func (k partKey) str(s string) partKey {
	k = append(strconv.AppendInt(k, int64(len(s)), 10), ':')
	return append(k, s...)
}

func (k partKey) num(n int64) partKey { return append(strconv.AppendInt(k, n, 10), ';') }

func shareCPUs(cs []wire.CPU) []wire.CPU {
	var k partKey
	for _, c := range cs {
		k = k.str(c.Model).num(int64(c.Cores)).num(int64(c.Threads))
	}
	return sharedCPUs.get(string(k), func() []wire.CPU {
		out := append([]wire.CPU(nil), cs...)
		for i := range out {
			out[i].Model = in(out[i].Model)
		}
		return out
	})
}

func shareDisks(ds []wire.Disk) []wire.Disk {
	var k partKey
	for _, d := range ds {
		k = k.str(d.Name).str(d.Model).num(d.SizeBytes).str(d.Type)
	}
	return sharedDisks.get(string(k), func() []wire.Disk {
		out := append([]wire.Disk(nil), ds...)
		for i := range out {
			out[i].Name, out[i].Model, out[i].Type = in(out[i].Name), in(out[i].Model), in(out[i].Type)
		}
		return out
	})
}

func shareFirmware(fs []wire.Firmware) []wire.Firmware {
	var k partKey
	for _, f := range fs {
		k = k.str(f.Name).str(f.Version)
	}
	return sharedFirmware.get(string(k), func() []wire.Firmware {
		out := append([]wire.Firmware(nil), fs...)
		for i := range out {
			out[i].Name, out[i].Version = in(out[i].Name), in(out[i].Version)
		}
		return out
	})
}

func shareAccelerators(as []wire.Accelerator) []wire.Accelerator {
	var k partKey
	for _, a := range as {
		k = k.str(a.Name).str(a.Type).str(a.Model)
	}
	return sharedAccel.get(string(k), func() []wire.Accelerator {
		out := append([]wire.Accelerator(nil), as...)
		for i := range out {
			a := &out[i]
			a.Name, a.Type, a.Model = in(a.Name), in(a.Type), in(a.Model)
		}
		return out
	})
}

// shareExtra returns a map equal to m (keys and values interned), shared
// with every host whose Extra is equal. An empty non-nil map stays its own
// (it is not nil, and nil would read differently nowhere, but the record
// keeps what was applied).
func shareExtra(m map[string]string) map[string]string {
	if len(m) == 0 {
		return map[string]string{}
	}
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	var k partKey
	for _, key := range keys {
		k = k.str(key).str(m[key])
	}
	return sharedExtra.get(string(k), func() map[string]string {
		out := make(map[string]string, len(m))
		for key, v := range m {
			out[in(key)] = in(v)
		}
		return out
	})
}
