package bench

import (
	"fmt"

	"github.com/rackfence/rackfence/testkit/procstat"
)

// MemBreakdown says where a coordinator's resident memory is: the kernel's
// split (anonymous memory: the Go heap, stacks and runtime structures;
// mapped files: the binary and the Raft log's bolt file) and the Go
// runtime's (its MemStats, scraped from /metrics). All in bytes.
type MemBreakdown struct {
	// RSSAnon, RSSFile: /proc/PID/status RssAnon, RssFile.
	RSSAnon, RSSFile int64
	// HeapAlloc is the heap's objects (live and not yet collected);
	// HeapInuse the spans holding them; HeapIdleKept the free spans the
	// runtime has not returned to the system (HeapIdle - HeapReleased).
	HeapAlloc, HeapInuse, HeapIdleKept int64
	// StackInuse: goroutine stacks' spans; MSpanInuse: span structures;
	// GCSys: the collector's metadata; OtherSys: other runtime structures.
	StackInuse, MSpanInuse, GCSys, OtherSys int64
	// Goroutines running.
	Goroutines int64
}

// memBreakdown reads the coordinator's MemBreakdown now.
func (f *fleet) memBreakdown() (MemBreakdown, error) {
	pid := f.coord.pid()
	m := MemBreakdown{RSSAnon: procstat.StatusKiB(pid, "RssAnon") << 10, RSSFile: procstat.StatusKiB(pid, "RssFile") << 10}
	var idle, released float64
	fields := map[string]*int64{"go_memstats_heap_alloc_bytes": &m.HeapAlloc, "go_memstats_heap_inuse_bytes": &m.HeapInuse,
		"go_memstats_stack_inuse_bytes": &m.StackInuse, "go_memstats_mspan_inuse_bytes": &m.MSpanInuse,
		"go_memstats_gc_sys_bytes": &m.GCSys, "go_memstats_other_sys_bytes": &m.OtherSys, "go_goroutines": &m.Goroutines}
	seen := 0
	err := f.metrics(func(name, _ string, v float64) {
		switch name {
		case "go_memstats_heap_idle_bytes":
			idle = v
		case "go_memstats_heap_released_bytes":
			released = v
		default:
			if p, ok := fields[name]; ok {
				*p = int64(v)
				seen++
			}
		}
	})
	if err == nil && seen < len(fields) {
		err = fmt.Errorf("/metrics: %d of the Go collector's %d memory samples missing (is the Go collector registered?)", len(fields)-seen, len(fields))
	}
	m.HeapIdleKept = int64(idle - released)
	return m, err
}

// String prints m in MiB.
func (m MemBreakdown) String() string {
	mib := func(b int64) float64 { return float64(b) / (1 << 20) }
	return fmt.Sprintf("anon=%.1f file=%.1f heap-alloc=%.1f heap-inuse=%.1f heap-idle-kept=%.1f stack=%.1f mspan=%.1f gc-sys=%.1f other-sys=%.1f MiB goroutines=%d",
		mib(m.RSSAnon), mib(m.RSSFile), mib(m.HeapAlloc), mib(m.HeapInuse), mib(m.HeapIdleKept), mib(m.StackInuse), mib(m.MSpanInuse), mib(m.GCSys), mib(m.OtherSys), m.Goroutines)
}

// Map is m for JSON output (MiB, goroutines).
func (m MemBreakdown) Map() map[string]any {
	mib := func(b int64) float64 { return float64(b) / (1 << 20) }
	return map[string]any{"anonMiB": mib(m.RSSAnon), "fileMiB": mib(m.RSSFile), "heapAllocMiB": mib(m.HeapAlloc), "heapInuseMiB": mib(m.HeapInuse),
		"heapIdleKeptMiB": mib(m.HeapIdleKept), "stackInuseMiB": mib(m.StackInuse), "mspanInuseMiB": mib(m.MSpanInuse), "gcSysMiB": mib(m.GCSys),
		"otherSysMiB": mib(m.OtherSys), "goroutines": m.Goroutines}
}
