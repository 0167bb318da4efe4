package seal

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
)

// Key file format (text, one key a line):
//
//	# comment lines and blank lines are ignored
//	ID BASE64KEY
//
// BASE64KEY is the standard base64 of KeySize random bytes. The last key
// line is the primary key: new values are sealed under it. Older lines
// stay until nothing is sealed under them any more.
const fileHeader = `# rackfence secrets keyring: one key a line, "ID BASE64(32-byte AES-256 key)".
# The LAST line is the primary key: new credentials are sealed under it.
# Keep older lines until "rackfencectl secrets status" shows they seal nothing.
# Every coordinator member needs the same keys. Never commit or log this file.
`

// Marshal writes the keyring in the key file format. The bytes are the
// keys themselves: hand them only over an authenticated, encrypted channel.
func (k *Keyring) Marshal() []byte {
	var b bytes.Buffer
	b.WriteString(fileHeader)
	if k == nil {
		return b.Bytes()
	}
	for _, x := range k.keys {
		fmt.Fprintf(&b, "%s %s\n", x.id, base64.StdEncoding.EncodeToString(x.raw))
	}
	return b.Bytes()
}

// Parse reads the key file format. It refuses an empty keyring, duplicate
// IDs and keys that are not KeySize bytes, naming the line. Errors never
// quote key material.
func Parse(b []byte) (*Keyring, error) {
	k := &Keyring{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("%w: line %d: want \"ID BASE64KEY\", got %d fields", ErrKeyFile, n, len(f))
		}
		if ValidateKeyID(f[0]) != nil {
			// Not quoted: with the fields swapped it would be the key.
			return nil, fmt.Errorf("%w: line %d: the first field is not a key ID (1 to 64 of A-Z a-z 0-9 . _ -); the line must be \"ID BASE64KEY\" in that order", ErrKeyFile, n)
		}
		raw, err := base64.StdEncoding.DecodeString(f[1])
		if err != nil {
			return nil, fmt.Errorf("%w: line %d (key %s): the key is not standard base64", ErrKeyFile, n, f[0])
		}
		if k.Has(f[0]) {
			return nil, fmt.Errorf("%w: line %d: key ID %s appears twice", ErrKeyFile, n, f[0])
		}
		x, err := newKey(f[0], raw)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrKeyFile, n, err)
		}
		k.keys = append(k.keys, x)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKeyFile, err)
	}
	if len(k.keys) == 0 {
		return nil, fmt.Errorf("%w: no key lines", ErrKeyFile)
	}
	return k, nil
}

// Load reads a key file. It refuses a file that others than its owner may
// read or write (like ssh with private keys): chmod 600 it.
func Load(path string) (*Keyring, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if m := st.Mode().Perm(); m&0o077 != 0 {
		return nil, fmt.Errorf("secrets key file %s has mode %04o: only its owner may read it; run chmod 600 %s", path, m, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// Save writes the keyring to path with mode 0600, atomically (a temporary
// file in the same directory, synced, then renamed over path). A file
// replaced keeps its owner, so root editing a service's key file (say
// with rackfencectl secrets keygen) leaves it readable by the service.
func (k *Keyring) Save(path string) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".secrets-key-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if st, err := os.Stat(path); err == nil {
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			if err := f.Chown(int(sys.Uid), int(sys.Gid)); err != nil {
				f.Close()
				return fmt.Errorf("keep the owner (uid %d) of %s: %w", sys.Uid, path, err)
			}
		}
	}
	if _, err := f.Write(k.Marshal()); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// Holder holds the current keyring of a process; a reload (SIGHUP)
// replaces it while readers keep the one they got. Path is the key file,
// for messages that tell an operator where to add a key.
type Holder struct {
	Path string
	p    atomic.Pointer[Keyring]
}

// Get returns the current keyring, nil when none is loaded.
func (h *Holder) Get() *Keyring {
	if h == nil {
		return nil
	}
	return h.p.Load()
}

// Set replaces the keyring.
func (h *Holder) Set(k *Keyring) { h.p.Store(k) }
