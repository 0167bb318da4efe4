package coordinator

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rackfence/rackfence/coordinator/fsm"
)

// compressEntry is the leader's choice of an entry's form in the log: a
// CmdCompressed entry (fsm/command_compressed.go) once every voter
// applies it, the entry as it is before that (a rolling upgrade) and for
// entries below fsm.CompressMin or that do not shrink.
func (s *Store) compressEntry(entry []byte) []byte {
	if len(entry) < fsm.CompressMin || !s.Supports(fsm.CmdCompressed, fsm.CompressedVersion) {
		return entry
	}
	out := fsm.Compress(entry)
	if m := s.cfg.Metrics; m != nil && len(out) < len(entry) {
		m.compressedIn.Add(float64(len(entry)))
		m.compressedOut.Add(float64(len(out)))
	}
	return out
}

func newCompressedBytes() (in, out prometheus.Counter) {
	in = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "rackfence_log_compressed_input_bytes_total",
		Help: "Bytes of the log entries this leader wrote compressed, before compression.",
	})
	out = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "rackfence_log_compressed_output_bytes_total",
		Help: "Bytes of the log entries this leader wrote compressed, as written (divide by the input bytes for the ratio).",
	})
	return in, out
}
