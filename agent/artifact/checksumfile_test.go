package artifact

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestCacheChecksumFileFormats serves an image and checksum files in
// every format people publish (GNU text and binary mode, BSD tags, a
// single digest, a SHA256SUMS with other images' lines) from a real HTTP
// server: the cache reads the image's line and verifies the image.
func TestCacheChecksumFileFormats(t *testing.T) {
	const size = 100000
	md5s, s256, s512 := digest("md5", size), digest("sha256", size), digest("sha512", size)
	other := strings.Repeat("0", 64)
	files := map[string]string{
		"/gnu.sha256sum":   s256 + "  disk.qcow2\n",
		"/bin.sha256sum":   s256 + " *disk.qcow2\n",
		"/SHA256SUMS":      other + "  other.qcow2\n# comment\n" + s256 + "  ./images/disk.qcow2\n" + other + "  disk.qcow2.sig\n",
		"/CHECKSUM":        "SHA512 (other.qcow2) = " + strings.Repeat("1", 128) + "\nSHA512 (disk.qcow2) = " + s512 + "\n",
		"/disk.md5sum":     md5s + "\n",
		"/upper.sha256sum": strings.ToUpper(s256) + "  disk.qcow2\r\n",
		"/wrong.sha256sum": other + "  disk.qcow2\n",
		"/missing":         s256 + "  another.qcow2\n",
		"/tagmismatch":     "MD5 (disk.qcow2) = " + md5s + "\n",
		"/short":           "abcd  disk.qcow2\n",
	}
	img := newOrigin(t, size, 0)
	ck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, "sum", time.Unix(0, 0), strings.NewReader(body))
	}))
	t.Cleanup(ck.Close)
	s, reg := newServer(t, t.TempDir(), 64*mib)
	serve(t, s)
	imageURL := img.srv.URL + "/images/disk.qcow2"
	for _, c := range []struct {
		file, typ string
	}{
		{"/gnu.sha256sum", ""}, {"/bin.sha256sum", "sha256"}, {"/SHA256SUMS", "auto"}, {"/CHECKSUM", ""},
		{"/CHECKSUM", "sha512"}, {"/disk.md5sum", "md5"}, {"/disk.md5sum", ""}, {"/upper.sha256sum", ""},
	} {
		im := &wire.Image{URL: imageURL, Checksum: ck.URL + c.file, ChecksumType: c.typ}
		if err := wire.ValidateHost(&wire.Host{Name: "h", Rack: "r", Image: im}, "h"); err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		u, err := s.PrepareImage(context.Background(), im)
		if err != nil {
			t.Fatalf("%s (%q): %v", c.file, c.typ, err)
		}
		if code, b := get(t, u, ""); code != http.StatusOK || len(b) != size {
			t.Errorf("%s: %s answered %d, %d bytes", c.file, u, code, len(b))
		}
	}
	for _, c := range []struct {
		file, typ string
		is        error
		msg       string
	}{
		{"/wrong.sha256sum", "", ErrChecksumMismatch, "is " + s256 + ", the spec's image.checksum says " + other + ": fix image.checksum or the image at its origin (the digest is the image's line of the checksum file " + ck.URL + "/wrong.sha256sum)"},
		{"/missing", "", ErrChecksumFile, "no line for disk.qcow2"},
		{"/nothere.sha256sum", "", ErrChecksumFile, "404 Not Found"},
		{"/tagmismatch", "sha256", ErrChecksumFile, "image.checksumType says sha256"},
		{"/short", "", ErrChecksumFile, "4 hex digits"},
	} {
		cu := ck.URL + c.file
		_, err := s.PrepareImage(context.Background(), &wire.Image{URL: imageURL, Checksum: cu, ChecksumType: c.typ})
		if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want %v with %q", c.file, err, c.is, c.msg)
			continue
		}
		if c.is == ErrChecksumFile && !strings.Contains(err.Error(), cu) {
			t.Errorf("%s: %v does not name the checksum file's URL", c.file, err)
		}
	}
	// An unreachable checksum file is the origin's failure (retried).
	ck2 := httptest.NewServer(http.NotFoundHandler())
	gone := ck2.URL + "/x.sha256sum"
	ck2.Close()
	if _, err := s.PrepareImage(context.Background(), &wire.Image{URL: imageURL, Checksum: gone}); !errors.Is(err, ErrOrigin) || !strings.Contains(err.Error(), gone) {
		t.Errorf("unreachable checksum file: %v, want ErrOrigin naming %s", err, gone)
	}
	// 9 read (8 verified, 1 mismatching image), 4 refused, 1 unreachable.
	for result, want := range map[string]float64{"ok": 9, "refused": 4, "unreachable": 1} {
		if got := testutil.ToFloat64(s.m.checksumFiles.WithLabelValues(result)); got != want {
			t.Errorf("checksum files %s: %v, want %v", result, got, want)
		}
	}
	if n, err := testutil.GatherAndCount(reg, "rackfence_agent_image_checksum_files_total"); err != nil || n != 3 {
		t.Errorf("registered series: %d %v", n, err)
	}
}

func TestParseChecksumFileSingleValue(t *testing.T) {
	h := strings.Repeat("ab", 32)
	if got, algo, err := ParseChecksumFile([]byte("\n"+h+"\n\n"), "x.img"); err != nil || got != h || algo != "" {
		t.Fatalf("single value: %q %q %v", got, algo, err)
	}
	if _, _, err := ParseChecksumFile([]byte(h+"\n"+h+"\n"), "x.img"); err == nil {
		t.Fatal("two bare digests: no error")
	}
}
