// Package seal encrypts secrets at rest: a keyring of AES-256-GCM keys,
// each with an ID, the last one primary. Seal always uses the primary key
// and records its ID in the sealed value; Open finds the key by that ID, so
// a keyring holding an old and a new key opens values sealed under either
// while everything new is sealed under the new one (key rotation).
//
// The additional data (aad) binds a sealed value to what it is for — the
// coordinator passes the credential's name — so a value copied to another
// name fails to open.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
)

// KeySize is the size of every key: AES-256.
const KeySize = 32

// NonceSize is the GCM nonce size; nonces are random, so one key may seal
// up to 2^32 values before a nonce collision becomes a concern.
const NonceSize = 12

// Sealed is one encrypted value. It is safe to store and replicate: without
// the key named by KeyID it reveals only the plaintext's length.
type Sealed struct {
	// KeyID names the keyring key that sealed the value.
	KeyID string `json:"keyID"`
	// Nonce is the random GCM nonce (NonceSize bytes).
	Nonce []byte `json:"nonce"`
	// Ciphertext is the GCM output: encrypted plaintext and 16-byte tag.
	Ciphertext []byte `json:"ciphertext"`
}

// key is one keyring entry.
type key struct {
	id   string
	raw  []byte
	aead cipher.AEAD
}

// Keyring is an immutable set of keys; the last one is primary. Replace
// a keyring (Holder.Set) rather than changing one.
type Keyring struct {
	keys []key // file order; the last is primary
}

func newKey(id string, raw []byte) (key, error) {
	if err := ValidateKeyID(id); err != nil {
		return key{}, err
	}
	if len(raw) != KeySize {
		return key{}, fmt.Errorf("key %s is %d bytes, want %d (AES-256)", id, len(raw), KeySize)
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return key{}, fmt.Errorf("key %s: %w", id, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return key{}, fmt.Errorf("key %s: %w", id, err)
	}
	return key{id: id, raw: slices.Clone(raw), aead: aead}, nil
}

// ValidateKeyID checks a key ID: 1 to 64 characters of A-Z a-z 0-9 . _ -.
func ValidateKeyID(id string) error {
	if id == "" || len(id) > 64 {
		return fmt.Errorf("key ID %q must be 1 to 64 characters", id)
	}
	for _, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
		if !ok {
			return fmt.Errorf("key ID %q may hold only letters, digits, '.', '_' and '-'", id)
		}
	}
	return nil
}

// Generate returns a keyring of one new random key.
func Generate() (*Keyring, error) {
	return (&Keyring{}).WithNewKey()
}

// WithNewKey returns a copy of the keyring with a new random key appended
// as the primary key; the receiver is unchanged.
func (k *Keyring) WithNewKey() (*Keyring, error) {
	raw := make([]byte, KeySize)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	var id string
	for {
		b := make([]byte, 4)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("generate key ID: %w", err)
		}
		id = "k" + hex.EncodeToString(b)
		if !k.Has(id) {
			break
		}
	}
	nk, err := newKey(id, raw)
	if err != nil {
		return nil, err
	}
	return &Keyring{keys: append(slices.Clone(k.keys), nk)}, nil
}

// Primary is the ID of the key Seal uses.
func (k *Keyring) Primary() string {
	if k == nil || len(k.keys) == 0 {
		return ""
	}
	return k.keys[len(k.keys)-1].id
}

// IDs lists the key IDs in file order (the primary last).
func (k *Keyring) IDs() []string {
	if k == nil {
		return nil
	}
	out := make([]string, len(k.keys))
	for i, x := range k.keys {
		out[i] = x.id
	}
	return out
}

// Has reports whether the keyring holds key id.
func (k *Keyring) Has(id string) bool { return k.find(id) != nil }

func (k *Keyring) find(id string) *key {
	if k == nil {
		return nil
	}
	for i := range k.keys {
		if k.keys[i].id == id {
			return &k.keys[i]
		}
	}
	return nil
}

// Seal encrypts plaintext under the primary key, bound to aad.
func (k *Keyring) Seal(plaintext, aad []byte) (Sealed, error) {
	if k == nil || len(k.keys) == 0 {
		return Sealed{}, ErrNoKeys
	}
	p := k.keys[len(k.keys)-1]
	nonce := make([]byte, NonceSize)
	if _, err := rand.Read(nonce); err != nil {
		return Sealed{}, fmt.Errorf("seal: nonce: %w", err)
	}
	return Sealed{KeyID: p.id, Nonce: nonce, Ciphertext: p.aead.Seal(nil, nonce, plaintext, aad)}, nil
}

// Open decrypts s with the key it names. It fails with *UnknownKeyError
// when the keyring lacks that key and with ErrOpen when the value was
// altered, sealed for other additional data, or under another key of the
// same ID.
func (k *Keyring) Open(s Sealed, aad []byte) ([]byte, error) {
	if k == nil || len(k.keys) == 0 {
		return nil, &UnknownKeyError{ID: s.KeyID}
	}
	x := k.find(s.KeyID)
	if x == nil {
		return nil, &UnknownKeyError{ID: s.KeyID, Have: k.IDs()}
	}
	if len(s.Nonce) != NonceSize {
		return nil, fmt.Errorf("%w: nonce is %d bytes, want %d", ErrOpen, len(s.Nonce), NonceSize)
	}
	out, err := x.aead.Open(nil, s.Nonce, s.Ciphertext, aad)
	if err != nil {
		return nil, fmt.Errorf("%w (key %s)", ErrOpen, s.KeyID)
	}
	return out, nil
}
