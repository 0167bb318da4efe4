package coordinator

import (
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/seal"
)

// SealBMCPassword seals a BMC account password of host under this
// member's primary key, bound to the host's BMC account record (the
// pending and the current password share its AAD: confirming moves one
// to the other).
func (s *Store) SealBMCPassword(host, password string) (*seal.Sealed, error) {
	name := fsm.BMCAccountRecord(host)
	k := s.keys()
	if k == nil {
		return nil, errCredentialsKey("member %s has no secrets key, so it cannot seal the BMC account password of host %s: "+
			"put the cluster's key file at %s (copy it from another member) and send SIGHUP to this member (docs/operator.md, \"Secrets key\")",
			s.cfg.NodeID, host, s.SecretsKeyFile())
	}
	sealed, err := k.Seal([]byte(password), credentialsAAD(name))
	if err != nil {
		return nil, err
	}
	return &sealed, nil
}

// RevealBMCAccount opens the current and the pending password of a
// host's BMC account record ("" for one it does not hold).
func (s *Store) RevealBMCAccount(host string, c fsm.StoredCredentials) (current, pending string, err error) {
	name := fsm.BMCAccountRecord(host)
	k := s.keys()
	if c.Sealed != nil {
		b, err := s.openSealed(k, name, *c.Sealed, credentialsAAD(name))
		if err != nil {
			return "", "", err
		}
		current = string(b)
	}
	if c.BMC != nil && c.BMC.Pending != nil {
		b, err := s.openSealed(k, name, *c.BMC.Pending, credentialsAAD(name))
		if err != nil {
			return "", "", err
		}
		pending = string(b)
	}
	return current, pending, nil
}
