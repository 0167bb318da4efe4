package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rackfence/rackfence/shared/wire"
)

// Watchers waiting for the same thing at the same index share one round:
// one wait in the FSM, one answer built and encoded once, the same bytes
// written to each. A crowd of watchers of one rack (dashboards, tools
// following it) re-polls at the index of the
// answer it was given, so after each change the crowd is one round again.
//
// With many watchers waiting for it, a round woken by a change lingers
// (lingerFor) before it answers, so the changes of a burst of writes go
// out in one answer instead of one answer per write per watcher: every
// watcher still sees every change, a few milliseconds later, and the
// writes no longer wait behind thousands of answers and re-polls.
//
// A watcher that does not read its answer holds the shared bytes (no copy
// of its own) and no longer than Config.WatchWriteTimeout: then its stream
// (over HTTP/1.1, its connection) is cut. When many watchers left, the
// memory their connections and answers used goes back to the system at
// once (watch_free.go) instead of over minutes.

const (
	// lingerFrom is how many watchers of one thing make a woken round
	// linger.
	lingerFrom = 64
	// lingerPerWatcher is how long a round lingers per waiting watcher
	// (about what answering one costs the coordinator: its answer written,
	// its next long poll read and authorised), capped at maxLinger: 2,000
	// watchers linger 50 ms, 500 watchers 12.5 ms.
	lingerPerWatcher = 25 * time.Microsecond
	maxLinger        = 100 * time.Millisecond
	// watchWriteTimeout is Config.WatchWriteTimeout's default: how long a
	// watcher may take no part of its answer (watchChunk) before it is
	// cut off.
	watchWriteTimeout = 10 * time.Second
	// watchChunk is how much of an answer is written per write deadline.
	watchChunk = 64 << 10
	// freeFrom, freeAfter: when the watchers present (watch_free.go) drop
	// to a quarter of a peak of at least freeFrom, the memory is handed
	// back freeAfter later.
	freeFrom  = 256
	freeAfter = 5 * time.Second
	// freeAgain is when the memory is handed back a second time (handBack).
	freeAgain = 20 * time.Second
	// writeLanes is how many connections' watchers write their answers
	// at once (watch_lanes.go); the others wait their turn parked.
	// Thousands of handlers made runnable at once by one change queue
	// every other goroutine of the member (a write's network read, its
	// Raft apply, its log fsync) behind them: writes then waited hundreds
	// of milliseconds.
	writeLanes = 2
	// laneHold is the longest a watcher keeps its lane: one whose answer
	// does not go out by then (a slow reader) goes on writing outside the
	// lanes, bounded by WatchWriteTimeout, and lets the next one write.
	laneHold = 5 * time.Millisecond
	// keepRounds, keepFor bound the answered rounds a crowd keeps for its
	// late watchers (keepRecent).
	keepRounds = 8
	keepFor    = 30 * time.Second
)

// lingerFor is how long a woken round of watchers waiting for one thing
// (those in it, or those its last answer went to) waits before answering.
func lingerFor(waiting int) time.Duration {
	if waiting < lingerFrom {
		return 0
	}
	return min(time.Duration(waiting)*lingerPerWatcher, maxLinger)
}

// watchKey is what a watcher waits for: a rack ("" = every rack) after an
// index, with or without statuses, brief or whole.
type watchKey struct {
	rack   string
	after  uint64
	status bool
	brief  bool
}

// watchRound is one shared wait and its answer.
type watchRound struct {
	members int // guarded by watchHub.mu
	cancel  context.CancelFunc
	done    chan struct{} // closed when body or err is set
	body    []byte
	index   uint64 // the index body answers at: where its watchers follow on
	err     error
	at      time.Time // when a kept round answered (keepRecent)
	// turns lets the round's watchers take the answer a few connections
	// at a time (watch_turns.go).
	turns roundTurns
}

// watchHub holds the rounds of one server.
type watchHub struct {
	mu sync.Mutex
	// turnHold is how long a round's connection holds its turn before
	// the next opens anyway (watch_turns.go; turnHold, a test's own).
	turnHold time.Duration
	rounds   map[watchKey]*watchRound
	// crowd is, by what is watched (a key with after 0), how many
	// watchers the last round woken by a change answered: they come back
	// one by one, and a round started by the first lingers for them all.
	crowd map[watchKey]int
	// recent holds crowds' latest answered rounds by key, kept by crowd
	// in answer order (keepRecent).
	recent map[watchKey]*watchRound
	// streaming is, by what is watched, how many streamed watches follow
	// it: a crowd even while most of it is writing the last answer.
	streaming map[watchKey]int
	// writers counts, by crowd, the watchers writing an answer
	// (watch_sweep.go).
	writers map[watchKey]*crowdWriters
	kept    map[watchKey][]watchKey
	waiting int // watchers in a round (long polls and streams)
	// polls, open: the watchers present (watch_free.go): long polls from
	// their arrival until their answer is written, streams open; peak
	// is their most since the last hand-back.
	polls, open int
	peak        int
	freeing     bool // a hand-back of memory is scheduled

	lanes  chan struct{} // writeLanes tokens, one per connection writing
	laneMu sync.Mutex
	conns  map[string]*connLane // by remote address; guarded by laneMu
	first  *writesFirst         // holds lines back while writes are in flight (watch_first.go)

	waitingGauge prometheus.Gauge
	encoded      prometheus.Counter
	shared       prometheus.Counter
	cut          prometheus.Counter
	streams      prometheus.Gauge // open streamed watches (watch_stream.go)
	handBacks    prometheus.Counter
	log          *slog.Logger // nil: hand-backs are not logged
}

func newWatchHub(reg prometheus.Registerer) *watchHub {
	h := &watchHub{turnHold: turnHold, rounds: map[watchKey]*watchRound{}, crowd: map[watchKey]int{},
		recent: map[watchKey]*watchRound{}, streaming: map[watchKey]int{}, writers: map[watchKey]*crowdWriters{}, kept: map[watchKey][]watchKey{}, lanes: make(chan struct{}, writeLanes), conns: map[string]*connLane{}, first: newWritesFirst(),
		waitingGauge: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "rackfence_watch_waiting",
			Help: "Long-poll watches waiting on this member.",
		}),
		encoded: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rackfence_watch_answers_encoded_total",
			Help: "Watch answers encoded: one per round of watchers waiting for the same thing at the same index.",
		}),
		shared: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rackfence_watch_answers_sent_total",
			Help: "Watch answers sent, each a round's shared encoding.",
		}),
		cut: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rackfence_watch_slow_cut_total",
			Help: "Watch answers that could not be written: the watcher left, or did not take it within 10 s and was cut off.",
		}),
	}
	h.streams, h.handBacks = newStreamsGauge(), newHandBacksCounter()
	reg.MustRegister(h.waitingGauge, h.encoded, h.shared, h.cut, h.streams, h.handBacks, h.first.held, h.first.pauses)
	return h
}

// watchSource is what a round asks the FSM: wait blocks until a change
// after key.after (true), timeout (false) or ctx ends, building nothing;
// answer builds the answer as it is now.
type watchSource struct {
	wait   func(ctx context.Context, key watchKey, timeout <-chan time.Time) (bool, error)
	answer func(key watchKey) (any, error)
}

// join adds a watcher to the round for key, starting one when none runs.
func (h *watchHub) join(key watchKey, timeout time.Duration, src watchSource) *watchRound {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.waiting++
	h.waitingGauge.Set(float64(h.waiting))
	r := h.rounds[key]
	if r == nil {
		r = h.recent[key]
	}
	if r == nil {
		ctx, cancel := context.WithCancel(context.Background())
		r = &watchRound{cancel: cancel, done: make(chan struct{})}
		h.rounds[key] = r
		go h.run(ctx, key, r, timeout, src)
	}
	r.members++
	return r
}

// leave removes a watcher; the last one to leave a round still waiting
// ends it.
func (h *watchHub) leave(key watchKey, r *watchRound) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.waiting--
	h.waitingGauge.Set(float64(h.waiting))
	r.members--
	if r.members == 0 {
		r.cancel()
		if h.rounds[key] == r {
			delete(h.rounds, key)
		}
	}
}

// run waits for a change once for the round, lingers when the crowd
// watching the same thing is large, then builds and encodes the answer
// once.
func (h *watchHub) run(ctx context.Context, key watchKey, r *watchRound, timeout time.Duration, src watchSource) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	changed, err := src.wait(ctx, key, t.C)
	lingered := false
	if changed {
		crowd := key
		crowd.after = 0
		h.mu.Lock()
		d := lingerFor(max(r.members, h.crowd[crowd], h.streaming[crowd]))
		h.mu.Unlock()
		if lingered = d > 0; lingered {
			select {
			case <-time.After(d):
				h.awaitSweep(crowd, ctx.Done())
				err = ctx.Err()
			case <-ctx.Done():
				err = ctx.Err()
			}
		}
	}
	if err == nil {
		r.body, r.index, err = encodeAnswer(src, key)
		h.encoded.Inc()
	}
	r.err = err
	h.mu.Lock()
	if h.rounds[key] == r {
		delete(h.rounds, key)
	}
	if changed {
		crowd := key
		crowd.after = 0
		h.crowd[crowd] = r.members
		if err == nil && lingered {
			h.keepRecent(crowd, key, r)
		}
	}
	h.mu.Unlock()
	close(r.done)
	// The round's watchers take the answer by connection, in turn; the
	// crowd counts as writing it meanwhile, so its next round waits for
	// the turns too (watch_sweep.go).
	h.writing(key, 1)
	r.turns.release(h.turnHold)
	h.writing(key, -1)
}

// keepRecent keeps r, a crowd's round answered at key, for the crowd's
// watchers still writing the answer before it (or reading it): coming
// back at key.after they take r's answer at once and are at the crowd's
// index again. Without it each late watcher started a round of its own
// at its index, and a crowd fell apart into ever more rounds, each
// encoded and lingered for. The answer is what a new round would answer
// (every change after key.after, as of r.index); the next round brings
// the rest. A crowd keeps its keepRounds latest rounds, none older than
// keepFor. The caller holds h.mu.
func (h *watchHub) keepRecent(crowd, key watchKey, r *watchRound) {
	r.at = time.Now()
	h.recent[key] = r
	kept := append(h.kept[crowd], key)
	for len(kept) > 0 && (len(kept) > keepRounds || time.Since(h.recent[kept[0]].at) > keepFor) {
		delete(h.recent, kept[0])
		kept = kept[1:]
	}
	h.kept[crowd] = kept
}

// encodeAnswer builds key's answer and encodes it (with the newline
// echo's JSON answers end with, which also ends a line of a streamed
// watch), and returns the index it answers at.
func encodeAnswer(src watchSource, key watchKey) ([]byte, uint64, error) {
	v, err := src.answer(key)
	if err != nil {
		return nil, 0, err
	}
	var index uint64
	switch a := v.(type) {
	case wire.WatchResponse:
		index = a.Index
	case wire.FleetWatchResponse:
		index = a.Index
	}
	b, err := json.Marshal(v)
	return append(b, '\n'), index, err
}

// sharedWatch answers the watcher of c from the round for key.
func (s *Server) sharedWatch(c echo.Context, key watchKey, timeout time.Duration, src watchSource) error {
	s.watches.poll(1)
	defer s.watches.poll(-1)
	own := time.NewTimer(timeout)
	defer own.Stop()
	body, _, turn, err := s.awaitRound(c.Request().Context(), c.Request().RemoteAddr, key, timeout, own, src)
	defer finishTurn(turn)
	if err != nil {
		return err
	}
	s.watches.writing(key, 1)
	defer s.watches.writing(key, -1)
	return s.writeWatchAnswer(c, body)
}

// awaitRound waits in the round for key, in the turn of its connection
// conn (watch_turns.go), and returns its answer, the index it answers at
// and the turn to pass to finishTurn once the answer is written; or its
// own "nothing yet" when own (the watcher's timer, started for timeout)
// fires first (it joined a round started with a longer one). A streamed
// watcher passes the same timer for each of
// its lines: a line then allocates no timer of its own (at thousands of
// watchers, timers made per line were most of what the member allocated
// while answering them, and the garbage they left scattered what the
// member kept meanwhile over the crowd's memory).
func (s *Server) awaitRound(ctx context.Context, conn string, key watchKey, timeout time.Duration, own *time.Timer, src watchSource) ([]byte, uint64, *turnGroup, error) {
	r := s.watches.join(key, timeout, src)
	defer s.watches.leave(key, r)
	gate, turn := r.turns.enterTurn(conn)
	select {
	case <-gate: // opened only once the answer is set
		return r.body, r.index, turn, r.err
	case <-own.C:
		s.watches.encoded.Inc()
		body, index, err := encodeAnswer(src, key)
		return body, index, turn, err
	case <-ctx.Done():
		finishTurn(turn)
		return nil, 0, nil, ctx.Err()
	}
}

// stream counts a streamed watch of key's crowd (d: +1 opened, -1 closed).
func (h *watchHub) stream(key watchKey, d int) {
	key.after = 0
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.streaming[key] += d; h.streaming[key] <= 0 {
		delete(h.streaming, key)
	}
	h.streams.Add(float64(d))
	h.open += d
	h.noteWatchers()
}
