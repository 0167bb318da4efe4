package seal

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrNoKeys means there is no keyring (or an empty one) to seal with.
	ErrNoKeys = errors.New("no secrets key loaded")
	// ErrOpen means a sealed value failed authentication: it was altered,
	// moved to another name, or sealed under a different key of the same ID.
	ErrOpen = errors.New("sealed value failed authentication: altered, moved to another name, or sealed under another key with the same ID")
	// ErrKeyFile means a key file could not be parsed.
	ErrKeyFile = errors.New("bad secrets key file")
)

// UnknownKeyError means a sealed value names a key the keyring lacks.
type UnknownKeyError struct {
	// ID is the key the value was sealed under.
	ID string
	// Have lists the keys the keyring holds.
	Have []string
}

func (e *UnknownKeyError) Error() string {
	if len(e.Have) == 0 {
		return fmt.Sprintf("sealed under key %s, and no secrets key is loaded", e.ID)
	}
	return fmt.Sprintf("sealed under key %s, which is not in the keyring (it holds %s)", e.ID, strings.Join(e.Have, ", "))
}
