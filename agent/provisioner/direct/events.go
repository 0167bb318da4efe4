package direct

import (
	"context"
	"errors"

	"github.com/rackfence/rackfence/agent/errclass"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/provisioner"
)

var _ provisioner.EventSubscriber = (*Provisioner)(nil)

// ArmEvents subscribes the host's Redfish BMC (bmc.Conn.ArmEvents).
func (p *Provisioner) ArmEvents(ctx context.Context, h provisioner.Host, sub provisioner.EventSubscription) (provisioner.EventArmed, error) {
	c, err := p.conn(ctx, h)
	if err != nil {
		return provisioner.EventArmed{}, p.done(h, err)
	}
	a, err := c.ArmEvents(ctx, p.guard, h.Name, bmc.EventSubscribe{Destination: sub.Destination, Owner: sub.Owner,
		Context: sub.Context, Headers: sub.Headers})
	return provisioner.EventArmed{Path: a.Path, TestTarget: a.TestTarget, Replaced: a.Replaced}, p.eventsDone(h, err)
}

// DisarmEvents deletes the owner's subscriptions (bmc.Conn.DisarmEvents).
func (p *Provisioner) DisarmEvents(ctx context.Context, h provisioner.Host, owner string) (int, error) {
	c, err := p.conn(ctx, h)
	if err != nil {
		return 0, p.done(h, err)
	}
	n, err := c.DisarmEvents(ctx, p.guard, h.Name, owner)
	return n, p.done(h, err)
}

// EventSubscribed reads whether the BMC still lists path.
func (p *Provisioner) EventSubscribed(ctx context.Context, h provisioner.Host, path string) (bool, error) {
	c, err := p.conn(ctx, h)
	if err != nil {
		return false, p.done(h, err)
	}
	ok, err := c.EventSubscribed(ctx, path)
	return ok, p.done(h, err)
}

// SubmitTestEvent asks the BMC for a test event (bmc.Conn.SubmitTestEvent).
func (p *Provisioner) SubmitTestEvent(ctx context.Context, h provisioner.Host, target string) error {
	c, err := p.conn(ctx, h)
	if err != nil {
		return p.done(h, err)
	}
	return p.eventsDone(h, c.SubmitTestEvent(ctx, p.guard, h.Name, target))
}

// eventsDone is done, keeping the session when the BMC has no
// EventService (nothing stale about it).
func (p *Provisioner) eventsDone(h provisioner.Host, err error) error {
	if errors.Is(err, errclass.ErrUnsupported) {
		return err
	}
	return p.done(h, err)
}
