package agent

import (
	"context"
	"fmt"
	"sync"

	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/client"
)

// credCache keeps revealed BMC credentials per credentials name, so 1,000
// hosts sharing one record cost one request. An auth failure drops the
// entry (the operator may have fixed the password). Passwords stay in
// memory only: never logged, never in an error.
type credCache struct {
	c  CredentialsRevealer
	mu sync.Mutex
	m  map[string]*credCall
}

type credCall struct {
	done     chan struct{}
	user     string
	password string
	err      error
}

func newCredCache(c CredentialsRevealer) *credCache {
	return &credCache{c: c, m: map[string]*credCall{}}
}

// get returns the username and password of the credentials record name.
// Errors wrap provisioner.ErrAuth (record missing or not ours) or
// provisioner.ErrTransient (coordinator unreachable).
func (cc *credCache) get(ctx context.Context, name string) (string, string, error) {
	cc.mu.Lock()
	call, ok := cc.m[name]
	if !ok {
		call = &credCall{done: make(chan struct{})}
		cc.m[name] = call
		cc.mu.Unlock()
		cr, err := cc.c.RevealCredentials(ctx, name)
		switch {
		case err == nil:
			call.user, call.password = cr.Username, cr.Password
		case client.IsNotFound(err):
			call.err = fmt.Errorf("%w: credentials %q are not set on the coordinator; set them with: rackfencectl credentials set %s --username U --password-file F", provisioner.ErrAuth, name, name)
		case client.IsForbidden(err) || client.IsUnauthorized(err):
			call.err = fmt.Errorf("%w: the coordinator refused to reveal credentials %q to this agent (%v); check the agent token's rack", provisioner.ErrAuth, name, err)
		default:
			call.err = fmt.Errorf("%w: reading credentials %q: %v", provisioner.ErrTransient, name, err)
		}
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
		return "", "", fmt.Errorf("%w: reading credentials %q: %v", provisioner.ErrTransient, name, ctx.Err())
	}
	return call.user, call.password, call.err
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
