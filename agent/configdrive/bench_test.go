package configdrive_test

import (
	"testing"

	"github.com/rackfence/rackfence/agent/configdrive"
)

// BenchmarkBuild reports the time to build one host's drive (the sample's
// user, network and meta data) and its size in bytes.
func BenchmarkBuild(b *testing.B) {
	in := sample()
	var n int
	for b.Loop() {
		img, err := configdrive.Build(in)
		if err != nil {
			b.Fatal(err)
		}
		n = len(img)
	}
	b.ReportMetric(float64(n), "bytes/drive")
}
