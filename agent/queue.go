package agent

import (
	"sync"
	"time"
)

// queue is the work queue of host names feeding the worker pool. A name is
// in the queue at most once; a name added while a worker processes it is
// queued again when that worker calls done, so one host is never reconciled
// by two workers at once and no change is lost. addAfter schedules a later
// add, keeping only the earliest pending one per name.
type queue struct {
	mu         sync.Mutex
	cond       *sync.Cond
	fifo       []string
	dirty      map[string]bool
	processing map[string]bool
	timers     map[string]*delayed
	closed     bool
}

type delayed struct {
	at    time.Time
	timer *time.Timer
}

func newQueue() *queue {
	q := &queue{
		dirty:      map[string]bool{},
		processing: map[string]bool{},
		timers:     map[string]*delayed{},
	}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// add queues name now (and cancels a pending delayed add of it).
func (q *queue) add(name string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if d, ok := q.timers[name]; ok {
		d.timer.Stop()
		delete(q.timers, name)
	}
	q.addLocked(name)
}

func (q *queue) addLocked(name string) {
	if q.closed || q.dirty[name] {
		return
	}
	q.dirty[name] = true
	if q.processing[name] {
		return
	}
	q.fifo = append(q.fifo, name)
	q.cond.Signal()
}

// addAfter queues name after d unless an earlier add is already pending.
func (q *queue) addAfter(name string, d time.Duration) {
	if d <= 0 {
		q.add(name)
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	at := time.Now().Add(d)
	if old, ok := q.timers[name]; ok {
		if !old.at.After(at) {
			return
		}
		old.timer.Stop()
	}
	ent := &delayed{at: at}
	ent.timer = time.AfterFunc(d, func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		if q.timers[name] == ent {
			delete(q.timers, name)
			q.addLocked(name)
		}
	})
	q.timers[name] = ent
}

// get blocks until a name is available or the queue is closed (ok false).
func (q *queue) get() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.fifo) == 0 && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		return "", false
	}
	name := q.fifo[0]
	q.fifo[0] = ""
	q.fifo = q.fifo[1:]
	delete(q.dirty, name)
	q.processing[name] = true
	return name, true
}

// done marks name as processed; if it was added meanwhile it is queued again.
func (q *queue) done(name string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.processing, name)
	if q.dirty[name] && !q.closed {
		q.fifo = append(q.fifo, name)
		q.cond.Signal()
	}
}

// forget cancels a pending delayed add of name.
func (q *queue) forget(name string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if d, ok := q.timers[name]; ok {
		d.timer.Stop()
		delete(q.timers, name)
	}
}

// close wakes every waiting worker and drops everything queued.
func (q *queue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	for _, d := range q.timers {
		d.timer.Stop()
	}
	q.timers = map[string]*delayed{}
	q.fifo = nil
	q.cond.Broadcast()
}

// len is the number of names waiting (not counting delayed ones).
func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.fifo)
}
