package artifact

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

const mib = 1 << 20

func TestCacheOneOriginFetchForTenClients(t *testing.T) {
	const size = 8 * mib
	o := newOrigin(t, size, 200*time.Millisecond)
	dir := t.TempDir()
	s, _ := newServer(t, dir, 64*mib)
	serve(t, s)
	im := &wire.Image{URL: o.srv.URL + "/os/live.iso", Checksum: digest("sha256", size)}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	urls := make([]string, 10)
	errs := make([]error, 10)
	for i := range 10 {
		wg.Add(1)
		go func() { defer wg.Done(); urls[i], errs[i] = s.PrepareImage(ctx, im) }()
	}
	wg.Wait()
	for i := range 10 {
		if errs[i] != nil {
			t.Fatalf("prepare %d: %v", i, errs[i])
		}
	}
	if o.gets.Load() != 1 || o.bytes.Load() != size {
		t.Fatalf("origin: %d GETs, %d bytes; want 1 GET of %d", o.gets.Load(), o.bytes.Load(), size)
	}
	want := s.base + "/images/sha256-" + im.Checksum + "/live.iso"
	if urls[0] != want {
		t.Fatalf("URL %s, want %s", urls[0], want)
	}
	// Ten BMCs read it, whole and by ranges, from the cache.
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, b := get(t, urls[i], "bytes=1048576-1048579")
			if code != http.StatusPartialContent || len(b) != 4 || b[0] != genByte(mib) || b[3] != genByte(mib+3) {
				t.Errorf("range GET: %d %v", code, b)
			}
			code, b = get(t, urls[i], "")
			if code != http.StatusOK || len(b) != size || b[size-1] != genByte(size-1) {
				t.Errorf("GET: %d, %d bytes", code, len(b))
			}
		}()
	}
	wg.Wait()
	if o.gets.Load() != 1 {
		t.Errorf("origin GETs after the BMCs' reads: %d, want 1", o.gets.Load())
	}
	if h, m := counter(t, s.m.hits), counter(t, s.m.misses); h != 20 || m != 10 {
		t.Errorf("hits %v misses %v, want 20 and 10", h, m)
	}
	if got := counter(t, s.m.originBytes); got != size {
		t.Errorf("origin bytes metric %v, want %d", got, size)
	}
	if got := eventually(t, s.m.served.WithLabelValues("image"), 10*(size+4)); got != 10*(size+4) {
		t.Errorf("served image bytes %v, want %d", got, 10*(size+4))
	}
}

func TestCacheRefusesChecksumMismatch(t *testing.T) {
	const size = mib
	o := newOrigin(t, size, 0)
	dir := t.TempDir()
	s, _ := newServer(t, dir, 64*mib)
	base := serve(t, s)
	wrong := digest("sha256", size-1)
	im := &wire.Image{URL: o.srv.URL + "/img.iso", Checksum: wrong, ChecksumType: "sha256"}
	_, err := s.PrepareImage(context.Background(), im)
	if !errors.Is(err, ErrChecksumMismatch) || !hasAll(err.Error(), wrong, digest("sha256", size), o.srv.URL+"/img.iso", "image.checksum") {
		t.Fatalf("err = %v, want ErrChecksumMismatch naming both digests, the URL and image.checksum", err)
	}
	// Nothing of it is served (a BMC's request does not fetch it again),
	// nothing is left on disk.
	if code, _ := get(t, base+"/images/sha256-"+wrong+"/img.iso", ""); code != http.StatusNotFound {
		t.Errorf("a mismatching image answers %d, want 404", code)
	}
	if des, _ := os.ReadDir(dir); len(des) != 1 || des[0].Name() != ".lock" {
		t.Errorf("cache dir holds %v after a mismatch, want only .lock", des)
	}
	if counter(t, s.m.mismatches) != 1 || o.gets.Load() != 1 {
		t.Errorf("mismatches %v, origin GETs %d; want 1 and 1", counter(t, s.m.mismatches), o.gets.Load())
	}
	// The failure is not remembered: the next provision fetches again.
	if _, err = s.PrepareImage(context.Background(), im); !errors.Is(err, ErrChecksumMismatch) || o.gets.Load() != 2 {
		t.Errorf("second prepare: %v, %d origin GETs (want a mismatch after a second GET)", err, o.gets.Load())
	}
}

func TestCacheChecksumTypes(t *testing.T) {
	const size = 100000
	o := newOrigin(t, size, 0)
	s, _ := newServer(t, t.TempDir(), 64*mib)
	serve(t, s)
	for _, im := range []*wire.Image{
		{URL: o.srv.URL + "/a.iso", Checksum: digest("md5", size), ChecksumType: "md5"},
		{URL: o.srv.URL + "/b.iso", Checksum: "sha512:" + digest("sha512", size)},
		{URL: o.srv.URL + "/c.iso", Checksum: strings.ToUpper(digest("sha256", size)), ChecksumType: "auto"},
	} {
		u, err := s.PrepareImage(context.Background(), im)
		if err != nil {
			t.Fatalf("%+v: %v", im, err)
		}
		if code, b := get(t, u, ""); code != http.StatusOK || len(b) != size {
			t.Errorf("%s: %d, %d bytes", u, code, len(b))
		}
	}
	if _, err := s.PrepareImage(context.Background(), &wire.Image{URL: o.srv.URL + "/d.iso"}); !errors.Is(err, ErrNoChecksum) {
		t.Errorf("no checksum: %v, want ErrNoChecksum", err)
	}
	if _, err := s.PrepareImage(context.Background(), &wire.Image{URL: o.srv.URL + "/e.iso", Checksum: "sha256:xyz"}); !errors.Is(err, ErrNoChecksum) {
		t.Errorf("bad hex: %v, want ErrNoChecksum", err)
	}
}

func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	o := newOrigin(t, mib, 0)
	o2 := newOrigin(t, mib+1, 0)
	o3 := newOrigin(t, mib+2, 0)
	o4 := newOrigin(t, mib+3, 0)
	dir := t.TempDir()
	s, _ := newServer(t, dir, 3*mib+10)
	serve(t, s)
	ctx := context.Background()
	ims := []*wire.Image{
		{URL: o.srv.URL + "/1.iso", Checksum: digest("sha256", mib)},
		{URL: o2.srv.URL + "/2.iso", Checksum: digest("sha256", mib+1)},
		{URL: o3.srv.URL + "/3.iso", Checksum: digest("sha256", mib+2)},
		{URL: o4.srv.URL + "/4.iso", Checksum: digest("sha256", mib+3)},
	}
	for _, im := range ims[:3] {
		if _, err := s.PrepareImage(ctx, im); err != nil {
			t.Fatal(err)
		}
	}
	u1, _ := s.PrepareImage(ctx, ims[0]) // 1 is now the most recently used
	if _, err := s.PrepareImage(ctx, ims[3]); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "sha256-"+ims[1].Checksum)); !os.IsNotExist(err) {
		t.Errorf("image 2 (least recently used) still cached: %v", err)
	}
	for _, i := range []int{0, 2, 3} {
		if _, err := os.Stat(filepath.Join(dir, "sha256-"+ims[i].Checksum)); err != nil {
			t.Errorf("image %d evicted: %v", i+1, err)
		}
	}
	if counter(t, s.m.evictions) != 1 || counter(t, s.m.cacheBytes) != 3*mib+5 {
		t.Errorf("evictions %v, cache bytes %v", counter(t, s.m.evictions), counter(t, s.m.cacheBytes))
	}
	// A BMC asking for the evicted image makes the cache fetch it again
	// from the origin it was prepared with.
	code, b := get(t, strings.Replace(u1, ims[0].Checksum, ims[1].Checksum, 1), "")
	if code != http.StatusOK || len(b) != mib+1 || o2.gets.Load() != 2 {
		t.Errorf("evicted image: %d, %d bytes, origin GETs %d", code, len(b), o2.gets.Load())
	}
}

func TestCacheTooLargeAndOriginErrors(t *testing.T) {
	o := newOrigin(t, 2*mib, 0)
	s, _ := newServer(t, t.TempDir(), mib)
	serve(t, s)
	_, err := s.PrepareImage(context.Background(), &wire.Image{URL: o.srv.URL + "/big.iso", Checksum: digest("sha256", 2*mib)})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "--image-cache-size") {
		t.Errorf("too large: %v", err)
	}
	_, err = s.PrepareImage(context.Background(), &wire.Image{URL: "http://127.0.0.1:1/x.iso", Checksum: digest("sha256", 1)})
	if !errors.Is(err, ErrOrigin) {
		t.Errorf("unreachable origin: %v", err)
	}
}

func TestCacheReopenKeepsVerifiedImages(t *testing.T) {
	o := newOrigin(t, mib, 0)
	dir := t.TempDir()
	s, _ := newServer(t, dir, 8*mib)
	im := &wire.Image{URL: o.srv.URL + "/1.iso", Checksum: digest("sha256", mib)}
	if _, err := s.PrepareImage(context.Background(), im); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sha256-"+strings.Repeat("a", 64)+".part"), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.Close() // the agent restarts
	s2, _ := newServer(t, dir, 8*mib)
	base := serve(t, s2)
	if code, b := get(t, base+"/images/sha256-"+im.Checksum+"/1.iso", ""); code != http.StatusOK || len(b) != mib {
		t.Errorf("after reopen: %d, %d bytes", code, len(b))
	}
	if o.gets.Load() != 1 {
		t.Errorf("origin GETs %d, want 1 (the reopened cache serves from disk)", o.gets.Load())
	}
	if _, err := os.Stat(filepath.Join(dir, "sha256-"+strings.Repeat("a", 64)+".part")); !os.IsNotExist(err) {
		t.Error("a .part file survived reopening")
	}
}

func TestCacheDirOnePerProcess(t *testing.T) {
	dir := t.TempDir()
	s, _ := newServer(t, dir, mib)
	if _, err := New(Config{BaseURL: "http://x", CacheDir: dir, CacheSize: mib}); err == nil || !strings.Contains(err.Error(), "give each rackfence-agent its own --image-cache-dir") {
		t.Fatalf("second server on the same directory: %v", err)
	}
	s.Close()
	s2, err := New(Config{BaseURL: "http://x", CacheDir: dir, CacheSize: mib})
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	s2.Close()
}
