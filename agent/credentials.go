package agent

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// credCache keeps revealed credentials records per name, so 1,000 hosts
// sharing one record cost one request. An auth failure drops the entry
// (the operator may have fixed the password); so does any error reading
// it. Passwords and data stay in memory only: never logged, never in an
// error.
type credCache struct {
	c  CredentialsRevealer
	mu sync.Mutex
	m  map[string]*credCall
	// now is the clock data reads age entries by (tests replace it).
	now func() time.Time
}

type credCall struct {
	done chan struct{}
	cr   *wire.Credentials
	err  error // the coordinator's answer, unclassified
	at   time.Time
}

func newCredCache(c CredentialsRevealer) *credCache {
	return &credCache{c: c, m: map[string]*credCall{}, now: time.Now}
}

// get returns the username and password of the credentials record name.
// Errors wrap errclass.ErrAuth (record missing or not ours) or
// errclass.ErrTransient (coordinator unreachable).
func (cc *credCache) get(ctx context.Context, name string) (string, string, error) {
	cr, err := cc.record(ctx, name, 0)
	switch {
	case err == nil:
		return cr.Username, cr.Password, nil
	case ctx.Err() != nil && err == ctx.Err():
		return "", "", fmt.Errorf("%w: reading credentials %q: %v", errclass.ErrTransient, name, err)
	case client.IsNotFound(err):
		return "", "", fmt.Errorf("%w: credentials %q are not set on the coordinator; set them with: rackfencectl credentials set %s --username U --password-file F", errclass.ErrAuth, name, name)
	case client.IsForbidden(err) || client.IsUnauthorized(err):
		return "", "", fmt.Errorf("%w: the coordinator refused to reveal credentials %q to this agent (%v); check the agent token's rack", errclass.ErrAuth, name, err)
	default:
		return "", "", fmt.Errorf("%w: reading credentials %q: %v", errclass.ErrTransient, name, err)
	}
}

// record returns the revealed record name, from the cache unless the
// entry is older than maxAge (0: any age). A failed read is not kept.
func (cc *credCache) record(ctx context.Context, name string, maxAge time.Duration) (*wire.Credentials, error) {
	cc.mu.Lock()
	call, ok := cc.m[name]
	if ok && maxAge > 0 {
		select {
		case <-call.done:
			if cc.now().Sub(call.at) > maxAge {
				delete(cc.m, name)
				ok = false
			}
		default: // a read in flight is fresh
		}
	}
	if !ok {
		call = &credCall{done: make(chan struct{})}
		cc.m[name] = call
		cc.mu.Unlock()
		call.cr, call.err = cc.c.RevealCredentials(ctx, name)
		call.at = cc.now()
		close(call.done)
		if call.err != nil {
			cc.forget(name)
		}
	} else {
		cc.mu.Unlock()
	}
	select {
	case <-call.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return call.cr, call.err
}

// forget drops the cached record name, so the next get asks again.
func (cc *credCache) forget(name string) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if c, ok := cc.m[name]; ok {
		select {
		case <-c.done:
			delete(cc.m, name)
		default:
		}
	}
}
