package agent

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/rackfence/rackfence/shared/fence"
)

// session is everything the agent does under one lease epoch: the watch,
// the host store, the queue and the worker pool. It ends with the lease
// (or the agent); a new lease gets a new session built from scratch, so
// nothing decided under an old epoch is acted on under a new one.
type session struct {
	a *Agent
	// tasks: the BMC task records this session wrote or ended.
	tasks taskMemo
	// erases: each host's disk erase under way.
	erases eraseMemo
	lease  fence.Lease
	ctx    context.Context
	// end cancels ctx with a cause (ErrLeaseLost on a stale write).
	end   context.CancelCauseFunc
	log   *slog.Logger
	store *store
	queue *queue
	// stopping is set on shutdown: finish the current call, start no new one.
	stopping atomic.Bool
	// synced is closed once the first watch answer was applied.
	synced     chan struct{}
	syncedOnce sync.Once
	workers    sync.WaitGroup
	watcher    sync.WaitGroup
	// reporter sends status writes per rack (nil: the Coordinator lacks
	// the call; every write goes per host).
	reporter *reporter
	// events: the BMC event subscriptions of this session (events.go).
	events *eventTracker
}

func newSession(a *Agent, lease fence.Lease) *session {
	ctx, end := context.WithCancelCause(context.Background())
	s := &session{a: a, lease: lease, ctx: ctx, end: end,
		log:   a.cfg.Logger.With("epoch", lease.Epoch),
		store: newStore(), queue: newQueue(), synced: make(chan struct{}), events: newEventTracker()}
	s.reporter = newReporter(s)
	return s
}

// start runs the watcher and the worker pool.
func (s *session) start() {
	s.watcher.Add(1)
	go func() {
		defer s.watcher.Done()
		s.watch()
	}()
	if s.reporter != nil {
		s.watcher.Add(1)
		go func() {
			defer s.watcher.Done()
			s.reporter.run()
		}()
	}
	for i := 0; i < s.a.cfg.Workers; i++ {
		s.workers.Add(1)
		go func() {
			defer s.workers.Done()
			for {
				name, ok := s.queue.get()
				if !ok {
					return
				}
				s.reconcile(name)
				s.queue.done(name)
			}
		}()
	}
}

// fenced ends the session because the coordinator refused our epoch.
func (s *session) fenced(err error) {
	s.end(err)
}

// drain stops handing out work; workers finish their current reconcile.
func (s *session) drain() {
	s.stopping.Store(true)
	s.queue.close()
}

// stop cancels everything still running and waits for it.
func (s *session) stop(cause error) {
	s.stopping.Store(true)
	s.end(cause)
	s.queue.close()
	s.watcher.Wait()
	s.workers.Wait()
}
