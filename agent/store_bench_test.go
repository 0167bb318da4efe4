package agent

import (
	"fmt"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// BenchmarkStatuslessAnswer measures what the agent does with a
// status-less watch answer of 1,000 hosts it holds, every one named in
// StatusOmitted (a rack's statuses riding along with a change): the check
// for hosts new to the session (firstNew) and apply.
//
//	go test -run '^$' -bench StatuslessAnswer -benchmem ./agent/
func BenchmarkStatuslessAnswer(b *testing.B) {
	const hosts = 1000
	s := &session{a: &Agent{cfg: Config{Rack: "r1"}}, store: newStore(), queue: newQueue()}
	resp := &wire.WatchResponse{Hosts: make([]wire.Host, hosts), StatusOmitted: make([]string, hosts)}
	for i := range resp.Hosts {
		h := *fakeHost(fmt.Sprintf("h%04d", i), "r1", i%250)
		h.CreatedIndex, h.ModifiedIndex = uint64(10+i), uint64(10+i)
		resp.Hosts[i], resp.StatusOmitted[i] = h, h.Name
	}
	s.apply(resp)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if n := s.store.firstNew(resp); n != "" {
			b.Fatalf("%s taken for a new host", n)
		}
		s.apply(resp)
	}
}
