package fsm

import (
	"slices"
	"sort"

	"github.com/rackfence/rackfence/shared/seal"
)

// applyPutSealedCredentials stores a record with a sealed password; the
// sealing happened on the leader before the write, so Apply stays
// deterministic and never sees a key.
func (f *FSM) applyPutSealedCredentials(t *tx, c PutSealedCredentialsCmd) (any, error) {
	_, existed := f.s.Creds[c.Name]
	s := c.Sealed
	rec := credRec{Username: c.Username, Sealed: &s, Index: t.index}
	if c.Data != nil {
		d := *c.Data
		rec.Data, rec.DataKeys = &d, append([]string(nil), c.DataKeys...)
	}
	f.s.Creds[c.Name] = rec
	return !existed, nil
}

// applyResealCredentials swaps the sealed password if the record is still
// the one the re-encryption read (compare-and-set on its index).
func (f *FSM) applyResealCredentials(t *tx, c ResealCredentialsCmd) (any, error) {
	r, ok := f.s.Creds[c.Name]
	if !ok {
		return nil, notFound("credentials %s were deleted during the re-encryption", c.Name)
	}
	if r.Index != c.Index {
		return nil, conflict("credentials %s changed (index %d, read at %d) during the re-encryption; the new write is already sealed under the primary key", c.Name, r.Index, c.Index)
	}
	s := c.Sealed
	rec := credRec{Username: r.Username, Sealed: &s, Index: t.index, DataKeys: r.DataKeys, Data: r.Data, BMC: r.BMC, Pending: r.Pending}
	if c.Data != nil {
		d := *c.Data
		rec.Data = &d
	}
	f.s.Creds[c.Name] = rec
	return true, nil
}

// StoredCredentials is a credentials record as the FSM holds it: the
// password sealed, or (records written before sealing) in plaintext.
type StoredCredentials struct {
	Username string
	// Sealed is the sealed password; nil for a legacy plaintext record.
	Sealed *seal.Sealed
	// Plaintext is the password of a legacy record ("" when sealed).
	Plaintext string
	// Index is the Raft index of the record's last write.
	Index uint64
	// DataKeys are the data map's keys (sorted); Data the sealed map, nil
	// when the record holds no data.
	DataKeys []string
	Data     *seal.Sealed
	// BMC is set on a BMC account record (nil on the operator's records).
	BMC *BMCAccountInfo
}

func (r credRec) stored() StoredCredentials {
	s := StoredCredentials{Username: r.Username, Sealed: r.Sealed, Plaintext: r.Password, Index: r.Index,
		DataKeys: slices.Clone(r.DataKeys), Data: r.Data}
	if b := r.BMC; b != nil {
		s.BMC = &BMCAccountInfo{State: b.State, Epoch: b.Epoch, PendingEpoch: b.PendingEpoch, Reason: b.Reason,
			RotatedAt: b.RotatedAt, Pending: r.Pending}
	}
	return s
}

// Credentials returns a stored credentials record.
func (f *FSM) Credentials(name string) (StoredCredentials, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	c, ok := f.s.Creds[name]
	return c.stored(), ok
}

// NamedCredentials is one record of AllCredentials.
type NamedCredentials struct {
	Name string
	StoredCredentials
}

// AllCredentials returns every record sorted by name, and the applied
// index they reflect.
func (f *FSM) AllCredentials() ([]NamedCredentials, uint64) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := make([]NamedCredentials, 0, len(f.s.Creds))
	for n, c := range f.s.Creds {
		out = append(out, NamedCredentials{Name: n, StoredCredentials: c.stored()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, f.applied.Load()
}

// SecretsUsage counts credentials records by the key that seals them;
// plaintext counts legacy records sealed by none.
func (f *FSM) SecretsUsage() (byKey map[string]int, plaintext, total int, index uint64) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	byKey = map[string]int{}
	for _, c := range f.s.Creds {
		if c.Sealed == nil {
			plaintext++
		} else {
			byKey[c.Sealed.KeyID]++
		}
	}
	return byKey, plaintext, len(f.s.Creds), f.applied.Load()
}
