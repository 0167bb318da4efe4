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

// reset POSTs {"ResetType": typ} to the Reset action's target, refusing a
// type the system does not list when it lists any: what gofish's
// ComputerSystem.Reset does, with its error text.
func (p *rfPowerDoc) reset(typ redfish.ResetType) error {
	if s := p.supported(); len(s) > 0 && !slices.Contains(s, typ) {
		return fmt.Errorf("reset type '%s' is not supported by this service", typ)
	}
	body := struct{ ResetType redfish.ResetType }{ResetType: typ}
	return p.Post(p.Actions.Reset.Target, body)
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
