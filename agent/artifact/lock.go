package artifact

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes an exclusive lock on dir/.lock (flock, released when the
// file is closed or the process ends), so two agents never share a cache
// directory: their fetches would write the same .part files.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("image cache directory (--image-cache-dir): %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("image cache directory %s is in use by another process (%v): give each rackfence-agent its own --image-cache-dir", dir, err)
	}
	return f, nil
}
