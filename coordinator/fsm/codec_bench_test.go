package fsm

import (
	"encoding/json"
	"testing"
)

// BenchmarkCommandBody compares the v1 (JSON) and v2 (binary) bodies of a
// status report carrying hardware details, the most frequent command:
//
//	go test -run '^$' -bench CommandBody -benchmem ./coordinator/fsm/
func BenchmarkCommandBody(b *testing.B) {
	c := compatCommands()[11].(StatusCmd)
	v1, _ := json.Marshal(c)
	v1 = append([]byte{byte(CmdStatus), bodyJSON}, v1...)
	v2, _ := Encode(c)
	b.Run("decode-v1-json", func(b *testing.B) {
		b.ReportMetric(float64(len(v1)), "bytes")
		for i := 0; i < b.N; i++ {
			if _, err := Decode(v1); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode-v2-binary", func(b *testing.B) {
		b.ReportMetric(float64(len(v2)), "bytes")
		for i := 0; i < b.N; i++ {
			if _, err := Decode(v2); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode-v1-json", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := json.Marshal(c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode-v2-binary", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := Encode(c); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkEncodeRackReport is the leader's encoding of one rack report of
// 100 hosts, each a full fleet-shaped status with hardware details (what
// registration writes): the entry's bytes and what encoding allocates.
//
//	go test -run '^$' -bench EncodeRackReport -benchmem ./coordinator/fsm/
func BenchmarkEncodeRackReport(b *testing.B) {
	c := RackStatusCmd{Rack: "r000", Epoch: 7, Time: t0}
	for i := 0; i < 100; i++ {
		c.Hosts = append(c.Hosts, fleetStatus(i, 2, t0))
	}
	e, _ := Encode(c)
	b.ReportMetric(float64(len(e)), "entry-bytes")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Encode(c); err != nil {
			b.Fatal(err)
		}
	}
}
