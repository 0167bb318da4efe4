package artifact

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/rackfence/rackfence/shared/wire"
)

// The image cache: one verified file per image, named ALGO-HEX (its cache
// key) in the cache directory; ALGO-HEX.part while it is fetched. Entries
// are kept in least-recently-used order; a fetch in flight is shared by
// every request for the same key.

var errUnknown = errors.New("image not in the cache and no origin known for it")

// keyRE is a cache key: the algorithm and the lower-case hex digest.
var keyRE = regexp.MustCompile(`^(md5|sha256|sha512)-([0-9a-f]{32}|[0-9a-f]{64}|[0-9a-f]{128})$`)

type entry struct {
	key    string
	origin string
	size   int64
	ready  bool          // verified and on disk
	done   chan struct{} // closed when the fetch ends (ready or failed)
	err    error         // the fetch's error, once done
	elem   *list.Element // in lru while ready
}

type cache struct {
	s    *Server
	dir  string
	lock *os.File // dir/.lock, held while the server runs
	max  int64
	mu   sync.Mutex
	ents map[string]*entry
	// origins maps a key to the URL it was last prepared with, so a BMC's
	// request for an evicted image fetches it again.
	origins map[string]string
	lru     *list.List // front: most recently used
	total   int64
}

func openCache(s *Server, dir string, max int64) (*cache, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("image cache directory (--image-cache-dir): %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	c := &cache{s: s, dir: dir, lock: lock, max: max, ents: map[string]*entry{}, origins: map[string]string{}, lru: list.New()}
	des, err := os.ReadDir(dir)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("image cache directory (--image-cache-dir): %w", err)
	}
	type found struct {
		key  string
		size int64
		mod  int64
	}
	var fs []found
	for _, de := range des {
		name := de.Name()
		if strings.HasSuffix(name, ".part") {
			_ = os.Remove(filepath.Join(dir, name)) // an interrupted fetch
			continue
		}
		if !keyRE.MatchString(name) || !de.Type().IsRegular() {
			continue
		}
		fi, err := de.Info()
		if err != nil {
			continue
		}
		fs = append(fs, found{name, fi.Size(), fi.ModTime().UnixNano()})
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].mod > fs[j].mod })
	for _, f := range fs {
		e := &entry{key: f.key, size: f.size, ready: true, done: make(chan struct{})}
		close(e.done)
		e.elem = c.lru.PushBack(e)
		c.ents[f.key] = e
		c.total += f.size
	}
	c.mu.Lock()
	c.evict(nil)
	c.mu.Unlock()
	s.log.Info("image cache opened", "dir", dir, "maxBytes", max, "images", len(c.ents), "bytes", c.total)
	return c, nil
}

// Key returns the cache key of an image: ALGO-HEX from its checksum.
func Key(im *wire.Image) (string, error) {
	algo, sum := im.ChecksumAlgo()
	if algo == "" {
		return "", ErrNoChecksum
	}
	k := algo + "-" + strings.ToLower(sum)
	if !keyRE.MatchString(k) {
		return "", fmt.Errorf("%w: %s checksum %q is not %s hex", ErrNoChecksum, algo, sum, algo)
	}
	return k, nil
}

// PrepareImage makes sure the image is in the cache (fetching it from
// im.URL once, however many hosts ask at the same time, and verifying it
// against its checksum) and returns the URL the BMCs fetch it from. It
// waits for a fetch in flight until ctx ends (ctx's error then; the fetch
// goes on). A checksum that is a checksum file's URL is read from that
// file first (ErrChecksumFile when it cannot be). ErrNoCache without a
// cache, ErrNoChecksum without a checksum, ErrChecksumMismatch,
// ErrTooLarge or ErrOrigin when the fetch fails.
func (s *Server) PrepareImage(ctx context.Context, im *wire.Image) (string, error) {
	if s.cache == nil {
		return "", ErrNoCache
	}
	cu := im.ChecksumURL()
	im, err := s.resolveChecksum(ctx, im)
	if err != nil {
		return "", err
	}
	key, err := Key(im)
	if err != nil {
		return "", err
	}
	if err := s.cache.ensure(ctx, key, im.URL); err != nil {
		if cu != "" && errors.Is(err, ErrChecksumMismatch) {
			return "", fmt.Errorf("%w (the digest is the image's line of the checksum file %s)", err, cu)
		}
		return "", err
	}
	name := "image"
	if u, err := urlPath(im.URL); err == nil && path.Base(u) != "/" && path.Base(u) != "." {
		name = path.Base(u)
	}
	return s.base + "/images/" + key + "/" + name, nil
}

// ensure returns once key is verified on disk, fetching it from origin
// ("" = the origin last prepared) when it is not.
func (c *cache) ensure(ctx context.Context, key, origin string) error {
	c.mu.Lock()
	if origin != "" {
		c.origins[key] = origin
	} else {
		origin = c.origins[key]
	}
	e := c.ents[key]
	if e != nil && e.ready {
		c.lru.MoveToFront(e.elem)
		c.mu.Unlock()
		c.s.m.hits.Inc()
		return nil
	}
	if e == nil {
		if origin == "" {
			c.mu.Unlock()
			return errUnknown
		}
		e = &entry{key: key, origin: origin, done: make(chan struct{})}
		c.ents[key] = e
		go c.fetch(e)
	}
	c.mu.Unlock()
	c.s.m.misses.Inc()
	select {
	case <-e.done:
		return e.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// evict removes least recently used images until the total fits, never
// keep. c.mu held.
func (c *cache) evict(keep *entry) {
	for c.total > c.max {
		el := c.lru.Back()
		for el != nil && el.Value.(*entry) == keep {
			el = el.Prev()
		}
		if el == nil {
			return
		}
		e := el.Value.(*entry)
		c.lru.Remove(el)
		delete(c.ents, e.key)
		c.total -= e.size
		// Readers that opened it keep reading the unlinked file.
		if err := os.Remove(filepath.Join(c.dir, e.key)); err != nil && !os.IsNotExist(err) {
			c.s.log.Warn("could not remove an evicted image", "key", e.key, "err", err.Error())
		}
		c.s.m.evictions.Inc()
		c.s.log.Info("image evicted from the cache", "key", e.key, "bytes", e.size)
	}
	c.s.m.cacheBytes.Set(float64(c.total))
}

// open returns the verified file of key, marking it used.
func (c *cache) open(key string) (*os.File, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.ents[key]
	if e == nil || !e.ready {
		return nil, errUnknown
	}
	c.lru.MoveToFront(e.elem)
	return os.Open(filepath.Join(c.dir, key))
}

func (s *Server) serveImage(w http.ResponseWriter, r *http.Request, rest string) {
	key, _, _ := strings.Cut(rest, "/")
	if !keyRE.MatchString(key) {
		http.NotFound(w, r)
		return
	}
	if err := s.cache.ensure(r.Context(), key, ""); err != nil {
		s.log.Warn("cached image not served", "key", key, "remote", r.RemoteAddr, "err", err.Error())
		http.Error(w, err.Error(), httpStatus(err))
		return
	}
	f, err := s.cache.open(key)
	if err != nil {
		// Evicted between the two calls: the BMC retries.
		http.Error(w, "image evicted meanwhile: retry", http.StatusServiceUnavailable)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	cw := &countingWriter{ResponseWriter: w, served: s.m.served.WithLabelValues("image")}
	http.ServeContent(cw, r, path.Base(rest), fi.ModTime(), f)
	s.log.Debug("cached image served", "key", key, "remote", r.RemoteAddr, "range", r.Header.Get("Range"), "bytes", cw.n)
}
