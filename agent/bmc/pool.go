package bmc

import (
	"context"
	"errors"
	"sync"
)

// Pool keeps one open Conn per host name, so sessions are reused across
// reconciles: a Redfish login costs a round trip and a BMC session slot.
// A Conn is replaced when the host's target (address, user, password, TLS
// mode) changes, and dropped with Forget. Close logs every session out on
// shutdown. Safe for concurrent use.
type Pool struct {
	opts Options

	mu      sync.Mutex
	conns   map[string]*pooled
	closed  bool
	dialing map[string]*sync.Mutex
}

type pooled struct {
	target Target
	conn   *Conn
}

// NewPool returns an empty pool whose Conns use opts.
func NewPool(opts Options) *Pool {
	return &Pool{opts: opts, conns: map[string]*pooled{}, dialing: map[string]*sync.Mutex{}}
}

// Get returns the open Conn for host, dialing (logging in) when there is
// none or t differs from the target it was opened with. Errors are those of
// Dial; a failed dial leaves nothing cached.
func (p *Pool) Get(ctx context.Context, host string, t Target) (*Conn, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrPoolClosed
	}
	dm := p.dialing[host]
	if dm == nil {
		dm = &sync.Mutex{}
		p.dialing[host] = dm
	}
	p.mu.Unlock()

	// One dial per host at a time; different hosts dial in parallel.
	dm.Lock()
	defer dm.Unlock()
	p.mu.Lock()
	if e, ok := p.conns[host]; ok {
		if e.target == t {
			p.mu.Unlock()
			return e.conn, nil
		}
		delete(p.conns, host)
		p.mu.Unlock()
		_ = e.conn.Close(ctx)
	} else {
		p.mu.Unlock()
	}
	c, err := Dial(ctx, t, p.opts)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		go func() { _ = c.Close(context.Background()) }()
		return nil, ErrPoolClosed
	}
	p.conns[host] = &pooled{target: t, conn: c}
	return c, nil
}

// Forget closes and drops host's Conn (host deleted, detached, pivoted).
func (p *Pool) Forget(ctx context.Context, host string) {
	p.mu.Lock()
	e, ok := p.conns[host]
	delete(p.conns, host)
	delete(p.dialing, host)
	p.mu.Unlock()
	if ok {
		_ = e.conn.Close(ctx)
	}
}

// Len is the number of open Conns.
func (p *Pool) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Close logs out of every BMC (in parallel, bounded by ctx) and refuses
// further Gets.
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	conns := p.conns
	p.conns = map[string]*pooled{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	errs := make(chan error, len(conns))
	sem := make(chan struct{}, 32)
	for _, e := range conns {
		wg.Add(1)
		go func(c *Conn) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			errs <- c.Close(ctx)
		}(e.conn)
	}
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		if err != nil {
			all = append(all, err)
		}
	}
	return errors.Join(all...)
}
