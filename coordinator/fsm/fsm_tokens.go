package fsm

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// HashToken is how tokens are stored: SHA-256, hex.
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// TokenIDLen is how many hex digits of a token's stored hash make its
// public ID (64 bits: collisions are not a concern for a cluster's tokens).
const TokenIDLen = 16

// TokenID is the public ID of the token whose SHA-256 hex hash is hash.
func TokenID(hash string) string {
	if len(hash) < TokenIDLen {
		return hash
	}
	return hash[:TokenIDLen]
}

// putToken stores info under hash, deriving its ID, and indexes it.
func (s *state) putToken(hash string, info TokenInfo) {
	info.ID = TokenID(hash)
	if old, ok := s.Tokens[hash]; ok && old.LastUsed.After(info.LastUsed) {
		info.LastUsed = old.LastUsed
	}
	s.Tokens[hash] = info
	s.tokenIDs[info.ID] = hash
}

func (f *FSM) applyPutToken(t *tx, c PutTokenCmd) (any, error) {
	f.s.putToken(c.Hash, TokenInfo{Name: c.Name, Role: c.Role, Rack: c.Rack, CreatedAt: c.CreatedAt, ExpiresAt: c.ExpiresAt})
	return f.s.Tokens[c.Hash], nil
}

// applyRevokeToken deletes a token by ID. The last admin token still valid
// at c.Time is kept (409): without it nobody could manage the cluster
// again, since admin.token is written only at the first bootstrap.
func (f *FSM) applyRevokeToken(t *tx, c RevokeTokenCmd) (any, error) {
	hash, ok := f.s.tokenIDs[c.ID]
	if !ok {
		return nil, notFound("token %s does not exist (already revoked?); 'rackfencectl token list' shows the ids", c.ID)
	}
	info := f.s.Tokens[hash]
	if info.Role == wire.RoleAdmin && !info.Expired(c.Time) {
		others := 0
		for h, o := range f.s.Tokens {
			if h != hash && o.Role == wire.RoleAdmin && !o.Expired(c.Time) {
				others++
			}
		}
		if others == 0 {
			return nil, conflict("token %s is the last valid admin token: revoking it would leave nobody able to manage the cluster; create another first (rackfencectl token create --role admin)", c.ID)
		}
	}
	delete(f.s.Tokens, hash)
	delete(f.s.tokenIDs, c.ID)
	return info, nil
}

// applyTouchTokens moves LastUsed forward; unknown (revoked) IDs and
// older times are ignored.
func (f *FSM) applyTouchTokens(t *tx, c TouchTokensCmd) (any, error) {
	for id, at := range c.Used {
		hash, ok := f.s.tokenIDs[id]
		if !ok {
			continue
		}
		info := f.s.Tokens[hash]
		if at.After(info.LastUsed) {
			info.LastUsed = at
			f.s.Tokens[hash] = info
		}
	}
	return nil, nil
}

// TokenList returns every token (never a hash or secret), oldest first.
func (f *FSM) TokenList() ([]TokenInfo, uint64) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := make([]TokenInfo, 0, len(f.s.Tokens))
	for _, t := range f.s.Tokens {
		out = append(out, t)
	}
	sortTokens(out)
	return out, f.applied.Load()
}

// TokenByID looks a token up by its public ID.
func (f *FSM) TokenByID(id string) (TokenInfo, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	h, ok := f.s.tokenIDs[id]
	if !ok {
		return TokenInfo{}, false
	}
	return f.s.Tokens[h], true
}

func sortTokens(ts []TokenInfo) {
	sort.Slice(ts, func(i, j int) bool {
		if !ts[i].CreatedAt.Equal(ts[j].CreatedAt) {
			return ts[i].CreatedAt.Before(ts[j].CreatedAt)
		}
		return ts[i].ID < ts[j].ID
	})
}

// Minute truncates a use time to the granularity LastUsed keeps.
func Minute(t time.Time) time.Time { return t.UTC().Truncate(time.Minute) }
