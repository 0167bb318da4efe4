package fsm

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"io"
)

// CmdCompressed is a log entry whose body is another entry (one command
// or a CmdBatch), deflated. The leader writes it for entries of
// CompressMin bytes or more (coordinator/batch.go) when every voter
// applies it (the version gate); every member inflates it in Apply and
// applies what it holds, so the FSM, its snapshots and the state hash are
// exactly those of the plain entry. A binary that predates it stops at
// the entry (ErrUnknownCommand) rather than applying it differently.
//
// Why: while hosts register, an entry is a batch of rack status reports
// with hardware details (12 KB on average, up to 1 MB), most of it
// repeated from host to host. Deflated at the fastest level those entries
// are about a ninth of their size, and the log store, the log cache,
// replication to followers and the disk all carry that ninth (rqlite
// compresses its large commands for the same reason).
const CmdCompressed CmdType = 23

// CompressedVersion is the layout of a CmdCompressed entry: type,
// version, the uvarint length of the inflated entry, then a raw DEFLATE
// stream (RFC 1951) of it.
const CompressedVersion = 1

// CompressMin is the smallest entry the leader compresses: smaller ones
// (a host write, a lease renewal, a batch of a few of them) gain little
// and would pay for a compressor each.
const CompressMin = 4096

// maxInflated bounds the length a CmdCompressed entry may claim, so a
// corrupt length cannot make a member allocate without bound. The API's
// largest request body is far below it.
const maxInflated = 256 << 20

// Compressors and decompressors are kept in small free lists rather than
// a sync.Pool: a flate writer holds about 1.2 MB of state (at the fastest
// level too: its hash tables are arrays of the writer), and a pool
// drops its items at every collection, so while hosts register (a
// collection every few hundred milliseconds) the leader would allocate a
// new one per cycle. The leader keeps one compressor: entries are
// compressed by the batcher's goroutine, or by a lone write's when nothing
// else is in flight (coordinator/batch.go), so two calls seldom overlap,
// and one that does makes its own and drops it after (a second kept one
// would stay 1.2 MB of live heap for the process's life).
// Inflates run on the apply goroutine; a second reader (snapshot restore,
// tests) is small.
var (
	deflaters = make(chan *deflater, 1)
	inflaters = make(chan io.ReadCloser, 2)
)

// deflater is a compressor and the buffer it writes into; Compress copies
// the result into an entry of exactly its length (the log cache bounds
// entries by length) and keeps the buffer for the next call.
type deflater struct {
	w   *flate.Writer
	buf bytes.Buffer
}

// MaxKept bounds the scratch buffers kept between calls (the deflater's,
// the FSM's inflated entry, the leader batcher's batch): an entry larger than
// that is rare and its buffer is left to the collector.
const MaxKept = 4 << 20

func getDeflater() *deflater {
	select {
	case d := <-deflaters:
		return d
	default:
		w, _ := flate.NewWriter(nil, flate.BestSpeed)
		return &deflater{w: w}
	}
}

func putDeflater(d *deflater) {
	if d.buf.Cap() > MaxKept {
		d.buf = bytes.Buffer{}
	}
	select {
	case deflaters <- d:
	default:
	}
}

func getInflater() io.ReadCloser {
	select {
	case r := <-inflaters:
		return r
	default:
		return flate.NewReader(bytes.NewReader(nil))
	}
}

func putInflater(r io.ReadCloser) {
	select {
	case inflaters <- r:
	default:
	}
}

// Compress returns entry as a CmdCompressed entry of its own, or entry
// itself when it is shorter than CompressMin, already compressed, or
// would not shrink by an eighth. The caller checks the version gate
// first, and may reuse entry's memory once Compress returned another
// slice.
func Compress(entry []byte) []byte {
	if len(entry) < CompressMin || CmdType(entry[0]) == CmdCompressed {
		return entry
	}
	d := getDeflater()
	defer putDeflater(d)
	d.buf.Reset()
	d.buf.WriteByte(byte(CmdCompressed))
	d.buf.WriteByte(CompressedVersion)
	var n [binary.MaxVarintLen64]byte
	d.buf.Write(n[:binary.PutUvarint(n[:], uint64(len(entry)))])
	d.w.Reset(&d.buf)
	_, err := d.w.Write(entry)
	if err == nil {
		err = d.w.Close()
	}
	if err != nil || d.buf.Len() > len(entry)-len(entry)/8 {
		return entry
	}
	return bytes.Clone(d.buf.Bytes())
}

// inflate returns the entry a CmdCompressed entry holds, in dst's memory
// when it is large enough (Apply passes the FSM's buffer: nothing decoded
// from an entry refers to the entry's bytes, TestCompressedEntriesApplyAsPlain).
// It fails alike on every member for a corrupt entry, which Apply answers
// as an error.
func inflate(dst, b []byte) ([]byte, error) {
	if len(b) < 3 || CmdType(b[0]) != CmdCompressed {
		return nil, fmt.Errorf("compressed entry: too short (%d bytes)", len(b))
	}
	if b[1] != CompressedVersion {
		return nil, fmt.Errorf("%w: compressed entry of version %d", ErrUnknownCommand, b[1])
	}
	n, k := binary.Uvarint(b[2:])
	if k <= 0 || n < 2 || n > maxInflated {
		return nil, fmt.Errorf("compressed entry: bad inflated length")
	}
	r := getInflater()
	defer putInflater(r)
	if err := r.(flate.Resetter).Reset(bytes.NewReader(b[2+k:]), nil); err != nil {
		return nil, fmt.Errorf("compressed entry: %w", err)
	}
	out := dst[:0]
	if uint64(cap(out)) < n {
		out = make([]byte, n)
	}
	out = out[:n]
	if _, err := io.ReadFull(r, out); err != nil {
		return nil, fmt.Errorf("compressed entry: inflating %d bytes: %w", n, err)
	}
	var one [1]byte
	if m, err := r.Read(one[:]); m != 0 {
		return nil, fmt.Errorf("compressed entry: more than the %d bytes it declares", n)
	} else if err != io.EOF {
		return nil, fmt.Errorf("compressed entry: the stream does not end after the %d bytes it declares: %w", n, err)
	}
	if CmdType(out[0]) == CmdCompressed {
		return nil, fmt.Errorf("compressed entry: holds another compressed entry")
	}
	return out, nil
}
