package artifact

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// fetch downloads e from its origin into ALGO-HEX.part, hashing as it
// writes, and renames it into place only when the digest matches. Every
// waiter gets its error; a failed key is forgotten so the next request
// tries again.
func (c *cache) fetch(e *entry) {
	start := time.Now()
	size, err := c.download(e)
	c.mu.Lock()
	if err != nil {
		// Forgotten: the next PrepareImage (the host's retry) fetches
		// again; a BMC's request alone does not.
		delete(c.ents, e.key)
		delete(c.origins, e.key)
		e.err = err
	} else {
		e.ready, e.size = true, size
		e.elem = c.lru.PushFront(e)
		c.total += size
		c.evict(e)
	}
	close(e.done)
	c.mu.Unlock()
	if err != nil {
		c.s.log.Error("image fetch into the cache failed", "key", e.key, "origin", e.origin, "err", err.Error())
		return
	}
	c.s.log.Info("image fetched into the cache and verified", "key", e.key, "origin", e.origin, "bytes", size,
		"seconds", time.Since(start).Seconds())
}

func newHash(algo string) hash.Hash {
	switch algo {
	case "md5":
		return md5.New()
	case "sha512":
		return sha512.New()
	}
	return sha256.New()
}

func (c *cache) download(e *entry) (int64, error) {
	ctx, cancel := context.WithTimeout(c.s.stop, c.s.cfg.FetchTimeout)
	defer cancel()
	algo, want, _ := strings.Cut(e.key, "-")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.origin, nil)
	if err != nil {
		return 0, fmt.Errorf("%w: image.url %q: %v", ErrOrigin, e.origin, err)
	}
	resp, err := c.s.cfg.Origin.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%w: GET %s: %v: check that the agent reaches the image's origin", ErrOrigin, e.origin, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%w: GET %s answered %s: check image.url", ErrOrigin, e.origin, resp.Status)
	}
	if resp.ContentLength > c.max {
		return 0, fmt.Errorf("%w: %s is %d bytes, the cache holds at most %d: raise --image-cache-size", ErrTooLarge, e.origin, resp.ContentLength, c.max)
	}
	part := filepath.Join(c.dir, e.key+".part")
	f, err := os.OpenFile(part, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, fmt.Errorf("image cache: %w", err)
	}
	defer os.Remove(part) // nothing after the rename
	h := newHash(algo)
	// One byte past the limit tells an image that is too large.
	n, err := io.Copy(io.MultiWriter(f, h), &countingReader{r: io.LimitReader(resp.Body, c.max+1), c: c})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("%w: reading %s: %v", ErrOrigin, e.origin, err)
	}
	if n > c.max {
		return 0, fmt.Errorf("%w: %s is more than %d bytes: raise --image-cache-size", ErrTooLarge, e.origin, c.max)
	}
	got := hex.EncodeToString(h.Sum(nil))
	if got != want {
		c.s.m.mismatches.Inc()
		return 0, &MismatchError{Algo: algo, URL: e.origin, Got: got, Want: want}
	}
	if err := os.Rename(part, filepath.Join(c.dir, e.key)); err != nil {
		return 0, fmt.Errorf("image cache: %w", err)
	}
	return n, nil
}

// countingReader adds what it reads to the origin bytes metric.
type countingReader struct {
	r io.Reader
	c *cache
}

func (r *countingReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	r.c.s.m.originBytes.Add(float64(n))
	return n, err
}

func urlPath(u string) (string, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return "", err
	}
	return pu.Path, nil
}
