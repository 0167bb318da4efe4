package bmc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
)

// Redfish EventService (DMTF EventService / EventDestination): the rack
// agent subscribes a host's BMC to push events to its listener. A
// subscription's Context names the tier and the host ("rackfence HOST"):
// arming first deletes every subscription whose Context starts with the
// owner prefix (an earlier holder's, or this agent's before a restart),
// then creates one whose HttpHeaders carry the per-subscription secret.
// Every write is a BMC change and goes through the guard.

// EventSubscribe is what ArmEvents subscribes.
type EventSubscribe struct {
	// Destination is the https:// URL the BMC posts events to.
	Destination string
	// Owner is the Context prefix of the tier's subscriptions on this
	// BMC; Context is this subscription's (it starts with Owner).
	Owner, Context string
	// Headers go in HttpHeaders (write-only: the BMC never shows them).
	Headers map[string]string
}

// EventArmed is what ArmEvents did.
type EventArmed struct {
	// Path is the new subscription's resource.
	Path string
	// Replaced counts the owner's subscriptions it deleted first.
	Replaced int
	// TestTarget is the EventService's SubmitTestEvent target ("" when
	// it has none): SubmitTestEvent's shortcut.
	TestTarget string
}

type rfEventService struct {
	ServiceEnabled *bool
	Subscriptions  struct {
		ODataID string `json:"@odata.id"`
	}
	Actions struct {
		SubmitTestEvent struct {
			Target string `json:"target"`
		} `json:"#EventService.SubmitTestEvent"`
	}
}

type rfEventDestination struct {
	Destination, Context string
}

// eventService finds the BMC's EventService; ErrUnsupported when it has
// none or it is disabled. c.mu held (inside rfCall).
func (c *Conn) eventService(s *rfSession) (*rfEventService, error) {
	var root struct {
		EventService struct {
			ODataID string `json:"@odata.id"`
		}
	}
	if err := rfGet(s.api, "/redfish/v1", &root); err != nil {
		return nil, err
	}
	if root.EventService.ODataID == "" {
		return nil, fmt.Errorf("%w: %s has no EventService: the agent polls it", errclass.ErrUnsupported, c.addr)
	}
	var es rfEventService
	if err := rfGet(s.api, root.EventService.ODataID, &es); err != nil {
		if isNotFound(err) {
			return nil, fmt.Errorf("%w: %s links an EventService that is not there: the agent polls it", errclass.ErrUnsupported, c.addr)
		}
		return nil, err
	}
	if es.ServiceEnabled != nil && !*es.ServiceEnabled {
		return nil, fmt.Errorf("%w: %s: EventService.ServiceEnabled is false: enable it on the BMC, or the agent polls it", errclass.ErrUnsupported, c.addr)
	}
	if es.Subscriptions.ODataID == "" {
		return nil, fmt.Errorf("%w: %s: its EventService has no Subscriptions collection: the agent polls it", errclass.ErrUnsupported, c.addr)
	}
	return &es, nil
}

// ownedSubscriptions lists the subscriptions whose Context starts with
// owner. c.mu held.
func (c *Conn) ownedSubscriptions(s *rfSession, es *rfEventService, owner string) ([]string, error) {
	var coll rfCollection
	if err := rfGet(s.api, es.Subscriptions.ODataID, &coll); err != nil {
		return nil, err
	}
	var out []string
	for _, m := range coll.Members {
		var d rfEventDestination
		if err := rfGet(s.api, m.ID, &d); err != nil {
			if isNotFound(err) {
				continue // deleted meanwhile
			}
			return nil, err
		}
		if strings.HasPrefix(d.Context, owner) {
			out = append(out, m.ID)
		}
	}
	return out, nil
}

// ArmEvents replaces the owner's subscriptions on the BMC by one to
// sub.Destination. ErrUnsupported: no (enabled) EventService, or IPMI.
func (c *Conn) ArmEvents(ctx context.Context, g *guard.Guard, host string, sub EventSubscribe) (EventArmed, error) {
	var out EventArmed
	if c.proto != "redfish" {
		return out, fmt.Errorf("%w: IPMI has no event subscriptions: the agent polls %s", errclass.ErrUnsupported, c.addr)
	}
	const op = "events subscribe"
	err := g.Do(ctx, host, op, c.opts.MutationTimeout, func(ctx context.Context) error {
		return c.rfCall(ctx, op, func(ctx context.Context, s *rfSession) error {
			es, err := c.eventService(s)
			if err != nil {
				return err
			}
			old, err := c.ownedSubscriptions(s, es, sub.Owner)
			if err != nil {
				return err
			}
			for _, p := range old {
				resp, err := s.api.Delete(p)
				if err := deleted(resp, err); err != nil {
					return err
				}
				out.Replaced++
			}
			hdrs := []map[string]string{}
			for k, v := range sub.Headers {
				hdrs = append(hdrs, map[string]string{k: v})
			}
			resp, err := s.api.Post(es.Subscriptions.ODataID, map[string]any{
				"Destination": sub.Destination, "Context": sub.Context, "Protocol": "Redfish",
				"HttpHeaders": hdrs, "RegistryPrefixes": []string{"ResourceEvent", "Base"},
			})
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			out.TestTarget = es.Actions.SubmitTestEvent.Target
			out.Path = resp.Header.Get("Location")
			if i := strings.Index(out.Path, "/redfish/"); i > 0 {
				out.Path = out.Path[i:] // an absolute Location
			}
			return nil
		})
	})
	return out, err
}

// DisarmEvents deletes the owner's subscriptions on the BMC; it returns
// how many. A BMC without an EventService has none (0, nil).
func (c *Conn) DisarmEvents(ctx context.Context, g *guard.Guard, host, owner string) (int, error) {
	if c.proto != "redfish" {
		return 0, nil
	}
	const op = "events unsubscribe"
	n := 0
	err := g.Do(ctx, host, op, c.opts.MutationTimeout, func(ctx context.Context) error {
		return c.rfCall(ctx, op, func(ctx context.Context, s *rfSession) error {
			es, err := c.eventService(s)
			if err != nil {
				return err
			}
			old, err := c.ownedSubscriptions(s, es, owner)
			if err != nil {
				return err
			}
			for _, p := range old {
				resp, err := s.api.Delete(p)
				if err := deleted(resp, err); err != nil {
					return err
				}
				n++
			}
			return nil
		})
	})
	if errors.Is(err, errclass.ErrUnsupported) {
		return 0, nil
	}
	return n, err
}

// EventSubscribed reports whether the BMC still lists the subscription
// at path (a BMC reboot may forget it).
func (c *Conn) EventSubscribed(ctx context.Context, path string) (bool, error) {
	found := false
	err := c.rfCall(ctx, "events check", func(ctx context.Context, s *rfSession) error {
		var d rfEventDestination
		err := rfGet(s.api, path, &d)
		if isNotFound(err) {
			return nil
		}
		found = err == nil
		return err
	})
	return found, err
}

// SubmitTestEvent asks the BMC to send a test event (MessageId
// Base.1.0.Success) to its subscriptions: how the agent tells a quiet
// subscription from a dead one. target is the action's (from ArmEvents:
// one request); "" finds it.
func (c *Conn) SubmitTestEvent(ctx context.Context, g *guard.Guard, host, target string) error {
	if c.proto != "redfish" {
		return fmt.Errorf("%w: IPMI has no EventService", errclass.ErrUnsupported)
	}
	const op = "events test"
	return g.Do(ctx, host, op, c.opts.MutationTimeout, func(ctx context.Context) error {
		return c.rfCall(ctx, op, func(ctx context.Context, s *rfSession) error {
			if target == "" {
				es, err := c.eventService(s)
				if err != nil {
					return err
				}
				target = es.Actions.SubmitTestEvent.Target
			}
			if target == "" {
				return fmt.Errorf("%w: %s's EventService has no SubmitTestEvent action", errclass.ErrUnsupported, c.addr)
			}
			resp, err := s.api.Post(target, map[string]any{
				"MessageId": "Base.1.0.Success", "Message": "rackfence subscription check", "Severity": "OK"})
			if err != nil {
				return err
			}
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			return resp.Body.Close()
		})
	})
}

// deleted is a DELETE's outcome: a 404 (gone already) is no error.
func deleted(resp *http.Response, err error) error {
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.Body.Close()
}
