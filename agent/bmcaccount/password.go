package bmcaccount

import (
	"crypto/rand"
	"math/big"
)

// Character classes of a generated password. The specials are ones every
// BMC we know of accepts (no quote, backslash, colon, space or '<&>').
const (
	upper   = "ABCDEFGHJKLMNPQRSTUVWXYZ"
	lower   = "abcdefghijkmnopqrstuvwxyz"
	digits  = "23456789"
	special = "-_.!#+="
)

// DefaultPasswordLength is the length of a generated password when the
// BMC's policy allows it; shorter or longer only to fit the policy.
const DefaultPasswordLength = 20

// GeneratePassword returns a password from crypto/rand fitting p: length
// DefaultPasswordLength clamped to [MinPasswordLength, MaxPasswordLength],
// with at least one character of each class (upper, lower, digit,
// special), so a BMC requiring any set of classes takes it.
func GeneratePassword(p Policy) (string, error) {
	n := DefaultPasswordLength
	if p.MinPasswordLength > n {
		n = p.MinPasswordLength
	}
	if p.MaxPasswordLength > 0 && p.MaxPasswordLength < n {
		n = p.MaxPasswordLength
	}
	n = max(n, 4)
	spec := special
	if p.Specials != "" {
		spec = p.Specials
	}
	all := upper + lower + digits + spec
	out := make([]byte, n)
	for i, set := range []string{upper, lower, digits, spec} {
		c, err := pick(set)
		if err != nil {
			return "", err
		}
		out[i] = c
	}
	for i := 4; i < n; i++ {
		c, err := pick(all)
		if err != nil {
			return "", err
		}
		out[i] = c
	}
	// Fisher–Yates with crypto/rand, so the classes' places are random.
	for i := n - 1; i > 0; i-- {
		j, err := rand.Int(rand.Reader, big.NewInt(int64(i+1)))
		if err != nil {
			return "", err
		}
		k := int(j.Int64())
		out[i], out[k] = out[k], out[i]
	}
	return string(out), nil
}

func pick(set string) (byte, error) {
	j, err := rand.Int(rand.Reader, big.NewInt(int64(len(set))))
	if err != nil {
		return 0, err
	}
	return set[j.Int64()], nil
}
