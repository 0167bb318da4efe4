package artifact

import (
	"crypto/md5"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// genReader is a deterministic generated image of any size (no disk):
// byte i is a function of i, so content checks see misplaced ranges.
type genReader struct{ size, off int64 }

func genByte(i int64) byte { return byte(i*7 + i>>11) }

func (g *genReader) Read(b []byte) (int, error) {
	if g.off >= g.size {
		return 0, io.EOF
	}
	n := int64(len(b))
	if n > g.size-g.off {
		n = g.size - g.off
	}
	for i := range n {
		b[i] = genByte(g.off + i)
	}
	g.off += n
	return int(n), nil
}

func (g *genReader) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
		g.off = off
	case io.SeekCurrent:
		g.off += off
	case io.SeekEnd:
		g.off = g.size + off
	}
	return g.off, nil
}

// origin is an image origin counting its GETs and bytes sent.
type origin struct {
	srv   *httptest.Server
	gets  atomic.Int64
	bytes atomic.Int64
}

func newOrigin(t testing.TB, size int64, delay time.Duration) *origin {
	o := &origin{}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.gets.Add(1)
		time.Sleep(delay) // lets concurrent requests pile up on one fetch
		// Counted before each write, so a client that has read everything
		// sees it counted.
		http.ServeContent(preCounting{w, &o.bytes}, r, "img.iso", time.Unix(0, 0), &genReader{size: size})
	}))
	t.Cleanup(o.srv.Close)
	return o
}

// preCounting adds what it is about to write to n.
type preCounting struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (p preCounting) Write(b []byte) (int, error) {
	p.n.Add(int64(len(b)))
	return p.ResponseWriter.Write(b)
}

func digest(algo string, size int64) string {
	var h interface {
		io.Writer
		Sum([]byte) []byte
	}
	switch algo {
	case "md5":
		h = md5.New()
	case "sha512":
		h = sha512.New()
	default:
		h = sha256.New()
	}
	_, _ = io.Copy(h, &genReader{size: size})
	return hex.EncodeToString(h.Sum(nil))
}

func newServer(t testing.TB, dir string, max int64) (*Server, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	s, err := New(Config{BaseURL: "http://placeholder", CacheDir: dir, CacheSize: max, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, reg
}

// serve mounts s on a test server and points its base URL there.
func serve(t testing.TB, s *Server) string {
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	s.base = hs.URL
	return hs.URL
}

// eventually waits up to 10 s for c to reach want (a handler counts its
// last bytes as the client already has them) and returns its value.
func eventually(t testing.TB, c prometheus.Collector, want float64) float64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v := testutil.ToFloat64(c)
		if v == want || time.Now().After(deadline) {
			return v
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func counter(t testing.TB, c prometheus.Collector) float64 {
	t.Helper()
	return testutil.ToFloat64(c)
}

func get(t testing.TB, url, rng string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func hasAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
