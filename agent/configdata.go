package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/hoststate"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// dataMaxAge is how long a revealed data record is reused: hosts
// provisioned together share one request, and a record the operator
// changed is read again within this long.
const dataMaxAge = 30 * time.Second

// dataFor lists the data records action act needs: provisioning needs all
// of them (nothing is provisioned half-configured); registering,
// inspecting and providing boot the deploy ramdisk, which needs only its
// own network data. Other actions need none.
func dataFor(h *wire.Host, act hoststate.Action) []wire.SecretRef {
	var out []wire.SecretRef
	for _, r := range h.SecretRefs() {
		switch {
		case act == hoststate.ActionProvision:
		case r.Field == "preprovisioningNetworkData" &&
			(act == hoststate.ActionRegister || act == hoststate.ActionInspect || act == hoststate.ActionProvide):
		default:
			continue
		}
		out = append(out, r)
	}
	return out
}

// resolveData reveals the records h names for act and fills ph's config
// drive and ramdisk network data. A record that is missing, lacks the key
// or holds invalid JSON fails the action (counted, retried with backoff)
// with an error naming the record and key and what to do; the provisioner
// is then not called at all.
func (s *session) resolveData(ctx context.Context, h *wire.Host, act hoststate.Action, ph *provisioner.Host) error {
	for _, r := range dataFor(h, act) {
		b, err := s.dataValue(ctx, r)
		if err != nil {
			return err
		}
		switch r.Field {
		case "preprovisioningNetworkData":
			ph.PreprovisioningNetworkData = b
			continue
		}
		if ph.ConfigDrive == nil {
			ph.ConfigDrive = &provisioner.ConfigDrive{}
		}
		switch r.Field {
		case "userData":
			ph.ConfigDrive.UserData = b
		case "networkData":
			ph.ConfigDrive.NetworkData = b
		case "metaData":
			ph.ConfigDrive.MetaData = b
		}
	}
	return nil
}

// dataValue reads one record's content for ref: its key ref.Key, or its
// lone key "value". A record that fails is dropped from the cache.
func (s *session) dataValue(ctx context.Context, r wire.SecretRef) ([]byte, error) {
	b, err := s.readData(ctx, r)
	if err != nil {
		// The operator fixes the record next: read it afresh on the retry.
		s.a.creds.forget(r.Name)
	}
	return b, err
}

func (s *session) readData(ctx context.Context, r wire.SecretRef) ([]byte, error) {
	cr, err := s.a.creds.record(ctx, r.Name, dataMaxAge)
	switch {
	case err == nil:
	case client.IsNotFound(err):
		return nil, fmt.Errorf("%w: %s: secret %q not found; create it with: rackfencectl credentials set %s --from-file %s=PATH",
			errclass.ErrFailed, r.Field, r.Name, r.Name, r.Key)
	case client.IsForbidden(err) || client.IsUnauthorized(err):
		return nil, fmt.Errorf("%w: %s: the coordinator refused to reveal secret %q to this agent (%v); check the agent token's rack",
			errclass.ErrFailed, r.Field, r.Name, err)
	default:
		return nil, fmt.Errorf("%w: %s: reading secret %q: %v", errclass.ErrTransient, r.Field, r.Name, err)
	}
	v, ok := cr.Data[r.Key]
	key := r.Key
	if !ok {
		if lone, has := cr.Data[wire.DataKeyValue]; has && len(cr.Data) == 1 {
			v, ok, key = lone, true, wire.DataKeyValue
		}
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s: secret %q has no key %q (it has %s); set it with: rackfencectl credentials set %s --from-file %s=PATH",
			errclass.ErrFailed, r.Field, r.Name, r.Key, keyList(cr.Data), r.Name, r.Key)
	}
	if r.Key == wire.DataKeyUserData {
		return []byte(v), nil
	}
	// Network data and meta data are JSON objects.
	var j any
	if err := json.Unmarshal([]byte(v), &j); err != nil {
		return nil, fmt.Errorf("%w: %s: key %q of secret %q is not valid JSON (%v); fix it with: rackfencectl credentials set %s --from-file %s=PATH",
			errclass.ErrFailed, r.Field, key, r.Name, err, r.Name, key)
	}
	if _, obj := j.(map[string]any); !obj {
		return nil, fmt.Errorf("%w: %s: key %q of secret %q is JSON but not an object; network data and meta data are JSON objects (OpenStack network_data.json, meta_data.json)",
			errclass.ErrFailed, r.Field, key, r.Name)
	}
	return []byte(v), nil
}

// keyList names a data map's keys for a message ("no keys" when empty).
func keyList(d map[string]string) string {
	if len(d) == 0 {
		return "no data keys"
	}
	ks := slices.Sorted(maps.Keys(d))
	for i, k := range ks {
		ks[i] = strconv.Quote(k)
	}
	return "keys " + strings.Join(ks, ", ")
}
