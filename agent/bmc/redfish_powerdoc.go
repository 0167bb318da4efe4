package bmc

import (
	"fmt"
	"slices"

	"github.com/stmcginnis/gofish/common"
	"github.com/stmcginnis/gofish/redfish"
)

// rfPowerDoc is the part of a ComputerSystem a power change reads: its
// PowerState and its Reset action (target, allowable reset types). Decoding
// only these skips what gofish's ComputerSystem.UnmarshalJSON builds for
// every GET (the whole system, its links, a copy of the raw body for
// Update), which a power check never uses. The embedded Entity takes the
// ETag and client from rfGet, so the POST carries the same If-Match as
// gofish's ComputerSystem.Reset.
type rfPowerDoc struct {
	common.Entity
	PowerState redfish.PowerState
	Actions    struct {
		Reset struct {
			AllowedResetTypes []redfish.ResetType `json:"ResetType@Redfish.AllowableValues"`
			Target            string
		} `json:"#ComputerSystem.Reset"`
	}
}

// supported is the system's allowable reset types (empty: not listed).
func (p *rfPowerDoc) supported() []redfish.ResetType { return p.Actions.Reset.AllowedResetTypes }

// resetPost is the POST of a Reset of type typ: the action's target and
// the body {"ResetType": typ}, refusing a type the system does not list
// when it lists any: what gofish's ComputerSystem.Reset sends, with its
// error text. The caller sends it (p.Post) inside Guard.Do, where the guard
// check (agent/guard) looks for every mutating call.
func (p *rfPowerDoc) resetPost(typ redfish.ResetType) (target string, body any, err error) {
	if s := p.supported(); len(s) > 0 && !slices.Contains(s, typ) {
		return "", nil, fmt.Errorf("reset type '%s' is not supported by this service", typ)
	}
	return p.Actions.Reset.Target, struct{ ResetType redfish.ResetType }{ResetType: typ}, nil
}

// powerDoc reads the power part of the system discovery chose (its ETag
// and client ready for the guarded Reset). c.mu held.
func (c *Conn) powerDoc(s *rfSession) (*rfDiscovery, *rfPowerDoc, error) {
	d, err := c.discover(s)
	if err != nil {
		return nil, nil, err
	}
	var p rfPowerDoc
	if err := rfGet(s.api, d.system, &p); err != nil {
		return nil, nil, err
	}
	return d, &p, nil
}
