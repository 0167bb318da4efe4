package coordinator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/seal"
	"github.com/rackfence/rackfence/shared/wire"
)

// The secrets key: credentials passwords are sealed (AES-256-GCM, package
// seal) by the leader's API handler before the Raft write, so the log, the
// snapshots and the FSM hold only sealed values. The keys live in a file
// outside the Raft data (Config.Secrets); they never enter the log.

// credentialsAAD binds a sealed password to its record's name, so a sealed
// value copied to another record fails to open.
func credentialsAAD(name string) []byte { return []byte("rackfence/credentials/" + name) }

// credentialsDataAAD binds a record's sealed data map to its name (and
// keeps it apart from the password: one never opens as the other).
func credentialsDataAAD(name string) []byte { return []byte("rackfence/credentials-data/" + name) }

// keys returns this member's keyring (nil when it has none).
func (s *Store) keys() *seal.Keyring { return s.cfg.Secrets.Get() }

// SecretsKeyFile is this member's key file path (for messages).
func (s *Store) SecretsKeyFile() string {
	if s.cfg.Secrets == nil || s.cfg.Secrets.Path == "" {
		return "(no --secrets-key-file)"
	}
	return s.cfg.Secrets.Path
}

// SealCredentialsData returns the command that stores credentials name
// with the password sealed under this member's primary key. A data map,
// when given, is sealed too (its JSON, one value beside the password),
// its keys kept in the clear, sorted; an empty map is no data.
func (s *Store) SealCredentialsData(name, username, password string, data map[string]string) (fsm.PutSealedCredentialsCmd, error) {
	k := s.keys()
	if k == nil {
		return fsm.PutSealedCredentialsCmd{}, errCredentialsKey("member %s has no secrets key, so it cannot seal the password of credentials %s: "+
			"put the cluster's key file at %s (copy it from another member) and send SIGHUP to this member, or retry once another member leads (docs/operator.md, \"Secrets key\")",
			s.cfg.NodeID, name, s.SecretsKeyFile())
	}
	sealed, err := k.Seal([]byte(password), credentialsAAD(name))
	if err != nil {
		return fsm.PutSealedCredentialsCmd{}, err
	}
	cmd := fsm.PutSealedCredentialsCmd{Name: name, Username: username, Sealed: sealed}
	if len(data) > 0 {
		if cmd.Data, err = sealData(k, name, data); err != nil {
			return fsm.PutSealedCredentialsCmd{}, err
		}
		cmd.DataKeys = slices.Sorted(maps.Keys(data))
	}
	return cmd, nil
}

// sealData seals a data map (its JSON) under the primary key.
func sealData(k *seal.Keyring, name string, data map[string]string) (*seal.Sealed, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	sd, err := k.Seal(b, credentialsDataAAD(name))
	if err != nil {
		return nil, err
	}
	return &sd, nil
}

// RevealData returns the data map of a stored record (nil when it holds
// none), opened with this member's keys; errors as RevealPassword's.
func (s *Store) RevealData(name string, c fsm.StoredCredentials) (map[string]string, error) {
	return s.openData(s.keys(), name, c)
}

func (s *Store) openData(k *seal.Keyring, name string, c fsm.StoredCredentials) (map[string]string, error) {
	if c.Data == nil {
		return nil, nil
	}
	b, err := s.openSealed(k, name, *c.Data, credentialsDataAAD(name))
	if err != nil {
		return nil, err
	}
	var data map[string]string
	if err := json.Unmarshal(b, &data); err != nil {
		return nil, fmt.Errorf("credentials %s: sealed data is not a JSON map: %w", name, err)
	}
	return data, nil
}

// RevealPassword returns the password of a stored record: a legacy
// plaintext one as it is, a sealed one opened with this member's keys. A
// missing key is a *Error naming the key ID and what to do.
func (s *Store) RevealPassword(name string, c fsm.StoredCredentials) (string, error) {
	return s.openWith(s.keys(), name, c)
}

func (s *Store) openWith(k *seal.Keyring, name string, c fsm.StoredCredentials) (string, error) {
	if c.Sealed == nil {
		return c.Plaintext, nil
	}
	pw, err := s.openSealed(k, name, *c.Sealed, credentialsAAD(name))
	return string(pw), err
}

// openSealed opens one sealed value of credentials name (password or
// data); a missing key is a *Error naming the key ID and what to do.
func (s *Store) openSealed(k *seal.Keyring, name string, sealed seal.Sealed, aad []byte) ([]byte, error) {
	pw, err := k.Open(sealed, aad)
	var uk *seal.UnknownKeyError
	switch {
	case err == nil:
		return pw, nil
	case errors.As(err, &uk) && len(uk.Have) == 0:
		return nil, errCredentialsKey("credentials %s are sealed under key %s, but member %s has no secrets key loaded: "+
			"copy the key file holding %s from another member to %s and send SIGHUP to this member (docs/operator.md, \"Secrets key\")",
			name, uk.ID, s.cfg.NodeID, uk.ID, s.SecretsKeyFile())
	case errors.As(err, &uk):
		return nil, errCredentialsKey("credentials %s are sealed under key %s, which member %s lacks (its key file %s holds %s): "+
			"add the line of key %s from another member's key file and send SIGHUP to this member (docs/operator.md, \"Rotating the secrets key\")",
			name, uk.ID, s.cfg.NodeID, s.SecretsKeyFile(), strings.Join(uk.Have, ", "), uk.ID)
	case errors.Is(err, seal.ErrOpen):
		return nil, newErr(wire.CodeInternal, "credentials %s do not open under key %s on member %s: the stored value was altered, or this member's key %s differs from the one that sealed it; "+
			"compare the key files of the members, or set the credentials again", name, sealed.KeyID, s.cfg.NodeID, sealed.KeyID)
	default:
		return nil, fmt.Errorf("open credentials %s: %w", name, err)
	}
}

// SecretsStatus reports this member's keys and how many records each
// seals, from the FSM as it is now (the caller makes the read linearizable).
func (s *Store) SecretsStatus() wire.SecretsStatus {
	byKey, plain, total, idx := s.fsm.SecretsUsage()
	k := s.keys()
	st := wire.SecretsStatus{NodeID: s.cfg.NodeID, KeyFile: s.SecretsKeyFile(), Primary: k.Primary(),
		Keys: []wire.SecretsKey{}, Credentials: total, Plaintext: plain, Index: idx}
	for _, id := range k.IDs() {
		st.Keys = append(st.Keys, wire.SecretsKey{ID: id, Primary: id == k.Primary(), Loaded: true, Credentials: byKey[id]})
		delete(byKey, id)
	}
	missing := make([]string, 0, len(byKey))
	for id := range byKey {
		missing = append(missing, id)
	}
	sort.Strings(missing)
	for _, id := range missing {
		st.Keys = append(st.Keys, wire.SecretsKey{ID: id, Credentials: byKey[id]})
	}
	return st
}

// Reencrypt re-seals every record not sealed under the primary key
// (legacy plaintext ones included), one compare-and-set Raft write each.
// Call it on the leader. A record this member cannot open is listed in
// Failed and the others go on.
func (s *Store) Reencrypt(ctx context.Context) (wire.ReencryptResult, error) {
	k := s.keys()
	if k == nil {
		return wire.ReencryptResult{}, errCredentialsKey("member %s (the leader) has no secrets key to re-encrypt with: put the cluster's key file at %s and send SIGHUP to it",
			s.cfg.NodeID, s.SecretsKeyFile())
	}
	if err := s.ReadBarrier(ctx); err != nil {
		return wire.ReencryptResult{}, err
	}
	all, _ := s.fsm.AllCredentials()
	res := wire.ReencryptResult{Primary: k.Primary()}
	for _, c := range all {
		if c.Sealed != nil && c.Sealed.KeyID == res.Primary && (c.Data == nil || c.Data.KeyID == res.Primary) {
			res.Unchanged++
			continue
		}
		pw, err := s.openWith(k, c.Name, c.StoredCredentials)
		var data map[string]string
		if err == nil {
			data, err = s.openData(k, c.Name, c.StoredCredentials)
		}
		if err != nil {
			res.Failed = append(res.Failed, wire.ReencryptFailure{Name: c.Name, Error: err.Error()})
			continue
		}
		sealed, err := k.Seal([]byte(pw), credentialsAAD(c.Name))
		if err != nil {
			return res, err
		}
		cmd := fsm.ResealCredentialsCmd{Name: c.Name, Index: c.Index, Sealed: sealed}
		if c.Data != nil {
			if cmd.Data, err = sealData(k, c.Name, data); err != nil {
				return res, err
			}
		}
		_, err = s.Apply(ctx, cmd)
		var ce *fsm.Error
		switch {
		case err == nil:
			res.Resealed++
		case errors.As(err, &ce) && (ce.Code == wire.CodeConflict || ce.Code == wire.CodeNotFound):
			res.Skipped++
		default:
			return res, err
		}
	}
	res.Index = s.fsm.AppliedIndex()
	if len(res.Failed) > 0 || res.Resealed > 0 {
		s.log.Info("credentials re-encrypted", "primary", res.Primary, "resealed", res.Resealed, "unchanged", res.Unchanged,
			"skipped", res.Skipped, "failed", len(res.Failed))
	}
	return res, nil
}
