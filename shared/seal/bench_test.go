package seal

import "testing"

// BenchmarkSeal and BenchmarkOpen: the cost a credentials PUT (seal, on
// the leader) and a reveal (open) add, for a 32-byte password.
func BenchmarkSeal(b *testing.B) {
	k, _ := Generate()
	pw, aad := make([]byte, 32), []byte("rackfence/credentials/r1-bmc")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := k.Seal(pw, aad); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	k, _ := Generate()
	aad := []byte("rackfence/credentials/r1-bmc")
	s, _ := k.Seal(make([]byte, 32), aad)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := k.Open(s, aad); err != nil {
			b.Fatal(err)
		}
	}
}
