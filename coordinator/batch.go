package coordinator

import (
	"bytes"
	"context"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rackfence/rackfence/coordinator/fsm"
)

// The batcher packs concurrent writes into one Raft log entry: it takes
// the first waiting command, then every other one already queued (up to
// MaxBatch, at most one per key, at most maxBatchBytes of commands), and
// submits them as one CmdBatch entry.
// While raft is busy committing, new writes queue up and form the next,
// larger batch; a lone writer still goes straight through.
//
// Commands that lead (fsm.Leads: the rack leases) queue apart, in first,
// and go to Raft at once in entries of their own: they do not wait for an
// in-flight slot, no report rides in their entry, and they are never
// shed as busy. At 100,000 hosts the queue held seconds of rack reports
// (apply p50 0.3 s, p99 over 2 s) while agents lost their leases
// (coordinator/DESIGN.md, "Leases lead").

type pending struct {
	key  string
	data []byte
	done chan fsm.Result
	// ctx is the caller's: once it ended before the batcher took the
	// write, nobody waits for it and it is dropped (see take).
	ctx    context.Context
	queued time.Time
}

type batcher struct {
	r       *raft.Raft
	in      chan *pending
	first   chan *pending // writes that lead (fsm.Leads)
	max     int
	timeout time.Duration
	stop    chan struct{}
	m       *Metrics
	// inflight bounds the batches submitted and not yet committed: while
	// they are, new writes queue up and form a larger next batch.
	inflight chan struct{}
	// active counts writes queued or in flight (batched or direct); the
	// store sends a write directly when it is zero.
	active atomic.Int64
	// compress may return an entry in a smaller form (fsm.Compress when
	// every voter applies it); nil leaves entries as they are.
	compress func([]byte) []byte
	// scratch is where the batcher's goroutine encodes a batch that is
	// then compressed: the plain batch would otherwise be garbage as large
	// as the entry. keep gives it back once the batches stay small.
	scratch []byte
	keep    fsm.ScratchKeep
	// apply hands an entry to Raft (r.Apply; a test's stand-in).
	apply func(cmd []byte, timeout time.Duration) raft.ApplyFuture
	// lag is how long the write the batcher took last had queued, while
	// more were queued behind it (0 once the queue was found empty).
	lag atomic.Int64
	// held is when the write the batcher holds while Raft has no room
	// for another batch was queued (unix ns; 0: none held).
	held atomic.Int64
}

// maxInflight batches may be in Raft at once: two keep the disk and the
// network busy (one is written while the other is replicated) and let
// batches grow with load.
const maxInflight = 2

// maxBatchBytes bounds the commands packed into one entry (a first command
// larger than that still goes, alone). While 10,000 hosts register, the
// queue holds rack reports with hardware details from every agent at once,
// and without a bound a batch took them all: entries of 3.5 MB, held
// whole in the batcher's scratch, in the FSM's inflate buffer on every
// member and as decoded commands while it applied, all kept to the
// coordinator's peak. At 1 MiB an entry is still some 15 reports of 100
// hosts, so the fsyncs stay shared.
const maxBatchBytes = 1 << 20

func newBatcher(r *raft.Raft, max int, timeout time.Duration, m *Metrics, compress func([]byte) []byte) *batcher {
	b := &batcher{r: r, in: make(chan *pending, 8192), first: make(chan *pending, 1024), max: max, timeout: timeout, stop: make(chan struct{}), m: m,
		inflight: make(chan struct{}, maxInflight), compress: compress}
	if r != nil {
		b.apply = r.Apply
	}
	go b.run()
	return b
}

func (b *batcher) run() {
	var carry *pending
	for {
		head := carry
		carry = nil
		if head == nil {
			select {
			case p := <-b.first:
				b.submitLeading(p)
				continue
			default:
			}
			select {
			case p := <-b.first:
				b.submitLeading(p)
				continue
			case head = <-b.in:
			case <-b.stop:
				return
			}
		}
		b.hold(head)
		if !b.awaitRoom() {
			return
		}
		b.hold(nil)
		if !b.take(head) {
			<-b.inflight
			continue
		}
		var batch []*pending
		batch, carry = collect(head, b.in, b.max, maxBatchBytes)
		batch = b.live(batch)
		b.submit(batch, true)
	}
}

// awaitRoom waits for one of the maxInflight slots; writes that lead and
// arrive meanwhile go to Raft at once, in entries of their own. False:
// the batcher stops.
func (b *batcher) awaitRoom() bool {
	for {
		select {
		case b.inflight <- struct{}{}:
			return true
		case p := <-b.first:
			b.submitLeading(p)
		case <-b.stop:
			return false
		}
	}
}

// submitLeading submits head, a write that leads, with every other one
// waiting, as entries of their own (no report rides along), without
// waiting for an in-flight slot: such an entry waits in Raft only for the
// entries already there.
func (b *batcher) submitLeading(head *pending) {
	for head != nil {
		var batch []*pending
		batch, head = collect(head, b.first, b.max, maxBatchBytes)
		kept := batch[:0]
		for _, p := range batch {
			if b.alive(p) {
				kept = append(kept, p)
			}
		}
		if len(kept) > 0 {
			b.submit(kept, false)
		}
	}
}

// collect takes head and every command already waiting on in, up to max
// commands and maxBytes of them, at most one per key. The command that
// ended the batch by its key or its size is returned as carry, to start
// the next one.
func collect(head *pending, in <-chan *pending, max, maxBytes int) (batch []*pending, carry *pending) {
	batch = []*pending{head}
	keys := map[string]struct{}{head.key: {}}
	size := len(head.data)
	for len(batch) < max {
		select {
		case p := <-in:
			if _, dup := keys[p.key]; dup || size+len(p.data) > maxBytes {
				return batch, p
			}
			keys[p.key] = struct{}{}
			size += len(p.data)
			batch = append(batch, p)
		default:
			return batch, nil
		}
	}
	return batch, nil
}

// submit hands batch to Raft as one entry; slot: it holds one of the
// in-flight slots, given back once Raft answered.
func (b *batcher) submit(batch []*pending, slot bool) {
	var data []byte
	if len(batch) == 1 {
		data = b.pack(batch[0].data)
	} else {
		parts := make([][]byte, len(batch))
		for i, p := range batch {
			parts[i] = p.data
		}
		data = b.encodeBatch(parts)
	}
	if b.m != nil {
		b.m.batchSize.Observe(float64(len(batch)))
	}
	f := b.apply(data, b.timeout)
	go func() {
		defer func() {
			b.active.Add(-int64(len(batch)))
			if slot {
				<-b.inflight
			}
		}()
		if err := f.Error(); err != nil {
			for _, p := range batch {
				p.done <- fsm.Result{Err: mapApplyErr(err)}
			}
			return
		}
		switch resp := f.Response().(type) {
		case []fsm.Result:
			for i, p := range batch {
				if i < len(resp) {
					p.done <- resp[i]
				} else {
					p.done <- fsm.Result{Err: fsm.ErrUnknownCommand}
				}
			}
		case fsm.Result:
			for _, p := range batch {
				p.done <- resp
			}
		default:
			for _, p := range batch {
				p.done <- fsm.Result{}
			}
		}
	}()
}

// take reports whether the queued write p still goes to Raft: a write
// whose caller stopped waiting (its context ended: the client already
// has its timeout) is dropped before it reaches the log, so a backlog
// does not keep applying writes nobody waits for while their retries
// queue up behind them. The caller was told the outcome is unknown; the
// write was not applied, which that answer allows. A write taken here
// is submitted and never dropped afterwards.
func (b *batcher) take(p *pending) bool {
	if !b.alive(p) {
		return false
	}
	if !p.queued.IsZero() {
		b.lag.Store(int64(time.Since(p.queued)))
	}
	return true
}

// alive is take without the queue's lag, for the writes that lead: their
// short wait must not hide the backlog of the others (overdue).
func (b *batcher) alive(p *pending) bool {
	if p.ctx != nil && p.ctx.Err() != nil {
		b.active.Add(-1)
		b.m.observeAbandoned()
		return false
	}
	return true
}

// live is batch (whose first write was taken) without the writes the
// batcher drops (take); lag restarts at 0 once the queue is empty.
func (b *batcher) live(batch []*pending) []*pending {
	kept := batch[:1]
	for _, p := range batch[1:] {
		if b.take(p) {
			kept = append(kept, p)
		}
	}
	if len(b.in) == 0 {
		b.lag.Store(0)
	}
	return kept
}

// queue returns where a write of command type t waits for the batcher:
// first when its command leads.
func (b *batcher) queue(t fsm.CmdType) chan *pending {
	if fsm.Leads(t) {
		return b.first
	}
	return b.in
}

// shed reports whether a write for queue q is refused before it is
// queued (ErrBusy): the queue is overdue and the write does not lead.
func (b *batcher) shed(q chan *pending) bool {
	return q != b.first && b.overdue()
}

// overdue reports whether writes queue behind one that waited longer
// than the apply timeout: a new write would time out before its turn,
// so the store refuses it at once (ErrBusy) instead of queueing it.
func (b *batcher) overdue() bool {
	if len(b.in) == 0 {
		return false
	}
	if time.Duration(b.lag.Load()) > b.timeout {
		return true
	}
	held := b.held.Load()
	return held != 0 && time.Since(time.Unix(0, held)) > b.timeout
}

// hold records p as the write waiting for room in Raft (nil: none).
func (b *batcher) hold(p *pending) {
	if p == nil || p.queued.IsZero() {
		b.held.Store(0)
		return
	}
	b.held.Store(p.queued.UnixNano())
}

// direct applies one command as its own log entry, from the caller's
// goroutine; the caller already counted it in active.
func (b *batcher) direct(data []byte) fsm.Result {
	defer b.active.Add(-1)
	if b.m != nil {
		b.m.batchSize.Observe(1)
	}
	f := b.apply(b.pack(data), b.timeout)
	if err := f.Error(); err != nil {
		return fsm.Result{Err: mapApplyErr(err)}
	}
	if r, ok := f.Response().(fsm.Result); ok {
		return r
	}
	return fsm.Result{}
}

// pack returns the form of entry the leader writes to the log.
func (b *batcher) pack(entry []byte) []byte {
	if b.compress == nil {
		return entry
	}
	return b.compress(entry)
}

// encodeBatch returns the entry of parts as the log gets it. A batch
// large enough to be compressed is encoded into the batcher's scratch
// first (the plain batch is then not garbage as large as the entry); a
// smaller one is encoded once, into its own entry, as before.
func (b *batcher) encodeBatch(parts [][]byte) []byte {
	if b.compress == nil || fsm.BatchBound(parts) < fsm.CompressMin {
		if b.scratch != nil && !b.keep.Keep(0, cap(b.scratch)) {
			b.scratch = nil
		}
		return fsm.EncodeBatch(parts)
	}
	b.scratch = fsm.AppendBatch(b.scratch[:0], parts)
	data := b.compress(b.scratch)
	if &data[0] == &b.scratch[0] {
		data = bytes.Clone(data) // not compressed: the log keeps it
	}
	if !b.keep.Keep(len(b.scratch), cap(b.scratch)) {
		b.scratch = nil
	}
	return data
}

// mapApplyErr maps the error of a raft.Apply future: a lost leadership
// means the entry may still commit (ErrOutcomeUnknown), unlike the other
// refusals, which come before the entry is appended.
func mapApplyErr(err error) error {
	if err == raft.ErrLeadershipLost {
		return ErrOutcomeUnknown
	}
	return mapRaftErr(err)
}

// mapRaftErr maps raft's refusals to the store's errors.
func mapRaftErr(err error) error {
	switch err {
	case raft.ErrNotLeader, raft.ErrLeadershipLost, raft.ErrLeadershipTransferInProgress:
		return ErrNotLeader
	case raft.ErrRaftShutdown:
		return ErrShutdown
	case raft.ErrEnqueueTimeout:
		return ErrBusy
	}
	return err
}
