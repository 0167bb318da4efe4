package coordinator

import (
	"encoding/binary"
	"fmt"
	"io"
)

// walkBolt walks every page of a bolt file reachable from meta's root, as
// bbolt does when it opens a file without a stored freelist
// (NoFreelistSync): there an out-of-range page id, a page referenced twice
// or a page that is neither branch nor leaf panics in a goroutine of
// bbolt's own, which no recover reaches. This walk reports the same
// faults, and every element that does not fit its page, as errors. It
// reads each reachable page once (the I/O bbolt's open does anyway).
func walkBolt(r io.ReaderAt, size int64, m boltMeta) error {
	w := &boltWalk{r: r, size: size, m: m, seen: map[uint64]bool{}}
	if m.freelist != boltNoFreelist {
		if _, err := w.page(m.freelist, boltFreelistPageFlag); err != nil {
			return fmt.Errorf("freelist: %w", err)
		}
	}
	return w.bucket(m.root, 0)
}

const (
	boltBranchPageFlag   = 0x01
	boltLeafPageFlag     = 0x02
	boltFreelistPageFlag = 0x10
	boltBucketLeafFlag   = 0x01
	boltElemSize         = 16
	// boltMaxDepth bounds the B+tree and bucket nesting a walk follows
	// (a loop of page references in a damaged file would not end).
	boltMaxDepth = 64
)

type boltWalk struct {
	r    io.ReaderAt
	size int64
	m    boltMeta
	seen map[uint64]bool
}

// page reads page id (with its overflow pages), checking it lies inside
// the high-water mark and the file, is not referenced twice and has one of
// the flags want.
func (w *boltWalk) page(id uint64, want uint16) ([]byte, error) {
	ps := uint64(w.m.pageSize)
	if id < 2 || id >= w.m.pgid {
		return nil, fmt.Errorf("page %d: out of bounds (high-water mark %d)", id, w.m.pgid)
	}
	hdr := make([]byte, boltPageHeaderSize)
	if _, err := w.r.ReadAt(hdr, int64(id*ps)); err != nil {
		return nil, fmt.Errorf("page %d: %v", id, err)
	}
	le := binary.NativeEndian
	flags, overflow := le.Uint16(hdr[8:10]), uint64(le.Uint32(hdr[12:16]))
	if got := le.Uint64(hdr[0:8]); got != id {
		return nil, fmt.Errorf("page %d: header says page %d", id, got)
	}
	if flags&want == 0 {
		return nil, fmt.Errorf("page %d: invalid type (flags %#x)", id, flags)
	}
	if id+overflow >= w.m.pgid || int64((id+overflow+1)*ps) > w.size {
		return nil, fmt.Errorf("page %d: %d overflow pages run past the high-water mark %d or the file", id, overflow, w.m.pgid)
	}
	for i := id; i <= id+overflow; i++ {
		if w.seen[i] {
			return nil, fmt.Errorf("page %d: referenced twice", i)
		}
		w.seen[i] = true
	}
	b := make([]byte, (overflow+1)*ps)
	if _, err := w.r.ReadAt(b, int64(id*ps)); err != nil {
		return nil, fmt.Errorf("page %d: %v", id, err)
	}
	return b, nil
}

// bucket walks the B+tree of the bucket rooted at page root, and the
// buckets nested in it.
func (w *boltWalk) bucket(root uint64, depth int) error {
	if depth > boltMaxDepth {
		return fmt.Errorf("page %d: nested deeper than %d", root, boltMaxDepth)
	}
	b, err := w.page(root, boltBranchPageFlag|boltLeafPageFlag)
	if err != nil {
		return err
	}
	le := binary.NativeEndian
	flags, count := le.Uint16(b[8:10]), int(le.Uint16(b[10:12]))
	if boltPageHeaderSize+count*boltElemSize > len(b) {
		return fmt.Errorf("page %d: %d elements do not fit the page", root, count)
	}
	for i := range count {
		off := boltPageHeaderSize + i*boltElemSize
		e := b[off : off+boltElemSize]
		if flags&boltBranchPageFlag != 0 {
			pos, ksize := int(le.Uint32(e[0:4])), int(le.Uint32(e[4:8]))
			if off+pos+ksize > len(b) {
				return fmt.Errorf("page %d: element %d runs past the page", root, i)
			}
			if err := w.bucket(le.Uint64(e[8:16]), depth+1); err != nil {
				return err
			}
			continue
		}
		eflags, pos, ksize, vsize := le.Uint32(e[0:4]), int(le.Uint32(e[4:8])), int(le.Uint32(e[8:12])), int(le.Uint32(e[12:16]))
		if off+pos+ksize+vsize > len(b) {
			return fmt.Errorf("page %d: element %d runs past the page", root, i)
		}
		if eflags&boltBucketLeafFlag == 0 {
			continue
		}
		if vsize < 16 {
			return fmt.Errorf("page %d: bucket element %d is %d bytes", root, i, vsize)
		}
		v := b[off+pos+ksize:]
		if child := le.Uint64(v[0:8]); child != 0 { // 0: an inline bucket, inside the value
			if err := w.bucket(child, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}
