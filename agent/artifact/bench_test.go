package artifact

import (
	"context"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// BenchmarkImageCacheTenBMCs is the figure of the rack's image cache: ten
// BMCs of one rack (ten hosts provisioned at once: each host's
// PrepareImage, then its BMC reading the whole image) fetch one image twice.
// It reports each round's seconds and the bytes pulled from the origin.
// The origin is generated (no disk); the cache writes under $TMPDIR and
// the benchmark removes it. Size: RACKFENCE_BENCH_IMAGE_MIB (default 1024).
//
//	go test -run XXX -bench ImageCacheTenBMCs -benchtime 1x ./agent/artifact
func BenchmarkImageCacheTenBMCs(b *testing.B) {
	size := int64(1024) << 20
	if v := os.Getenv("RACKFENCE_BENCH_IMAGE_MIB"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatal(err)
		}
		size = int64(n) << 20
	}
	sum := digest("sha256", size)
	for b.Loop() {
		o := newOrigin(b, size, 0)
		dir, err := os.MkdirTemp("", "rackfence-imagecache-")
		if err != nil {
			b.Fatal(err)
		}
		s, _ := newServer(b, dir, 2*size)
		serve(b, s)
		im := &wire.Image{URL: o.srv.URL + "/os.iso", Checksum: sum}
		var secs [2]float64
		var pulled [2]int64
		for round := range 2 {
			before := o.bytes.Load()
			start := time.Now()
			var wg sync.WaitGroup
			for range 10 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
					defer cancel()
					u, err := s.PrepareImage(ctx, im)
					if err != nil {
						b.Error(err)
						return
					}
					resp, err := http.Get(u)
					if err != nil {
						b.Error(err)
						return
					}
					n, _ := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if n != size {
						b.Errorf("BMC read %d bytes, want %d", n, size)
					}
				}()
			}
			wg.Wait()
			secs[round], pulled[round] = time.Since(start).Seconds(), o.bytes.Load()-before
		}
		os.RemoveAll(dir)
		b.ReportMetric(secs[0], "first-s")
		b.ReportMetric(secs[1], "second-s")
		b.ReportMetric(float64(pulled[0]), "first-origin-bytes")
		b.ReportMetric(float64(pulled[1]), "second-origin-bytes")
		b.ReportMetric(float64(10*size), "bytes-to-BMCs/round")
	}
}
