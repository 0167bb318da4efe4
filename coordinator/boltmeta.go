package coordinator

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
)

// A bolt file's two meta pages (pages 0 and 1), read without bbolt: bbolt
// maps the whole file and trusts the meta page it picks, so a file cut
// shorter than the page count its meta records faults on the first read
// past the end. bbolt v1.3 layout, host byte order: a 16-byte page header
// (id u64, flags u16, count u16, overflow u32) then the meta: magic u32,
// version u32, pageSize u32, flags u32, root bucket (root pgid u64,
// sequence u64), freelist pgid u64, pgid (high-water mark) u64, txid u64,
// checksum u64 (fnv64a of the 56 bytes before it; 0 = not checked).
const (
	boltMagic          = 0xED0CDAED
	boltVersion        = 2
	boltPageHeaderSize = 16
	boltMetaSize       = 64
	boltMetaPageFlag   = 0x04
	boltNoFreelist     = ^uint64(0)
	// boltMaxPageSize bounds the page size a meta may claim (bbolt uses
	// the OS page size: 4 KiB, 16 KiB or 64 KiB).
	boltMaxPageSize = 1 << 16
)

// boltMeta is the part of a bolt meta page the check needs.
type boltMeta struct {
	pageSize       uint32
	root, freelist uint64
	pgid, txid     uint64
}

// parseBoltMeta reads the meta page at the start of b.
func parseBoltMeta(b []byte) (boltMeta, error) {
	if len(b) < boltPageHeaderSize+boltMetaSize {
		return boltMeta{}, errors.New("page is cut short")
	}
	le := binary.NativeEndian
	if flags := le.Uint16(b[8:10]); flags&boltMetaPageFlag == 0 {
		return boltMeta{}, fmt.Errorf("not a meta page (flags %#x)", flags)
	}
	m := b[boltPageHeaderSize : boltPageHeaderSize+boltMetaSize]
	if magic := le.Uint32(m[0:4]); magic != boltMagic {
		return boltMeta{}, fmt.Errorf("bad magic %#x", magic)
	}
	if v := le.Uint32(m[4:8]); v != boltVersion {
		return boltMeta{}, fmt.Errorf("version %d, want %d", v, boltVersion)
	}
	if sum := le.Uint64(m[56:64]); sum != 0 {
		h := fnv.New64a()
		h.Write(m[:56])
		if h.Sum64() != sum {
			return boltMeta{}, errors.New("checksum mismatch")
		}
	}
	bm := boltMeta{pageSize: le.Uint32(m[8:12]), root: le.Uint64(m[16:24]), freelist: le.Uint64(m[32:40]),
		pgid: le.Uint64(m[40:48]), txid: le.Uint64(m[48:56])}
	switch {
	case bm.pageSize < boltPageHeaderSize+boltMetaSize || bm.pageSize > boltMaxPageSize || bm.pageSize&(bm.pageSize-1) != 0:
		return boltMeta{}, fmt.Errorf("page size %d is not a power of two up to %d", bm.pageSize, boltMaxPageSize)
	case bm.pgid < 4 || bm.root >= bm.pgid || bm.root < 2 || (bm.freelist != boltNoFreelist && (bm.freelist >= bm.pgid || bm.freelist < 2)):
		return boltMeta{}, fmt.Errorf("page ids out of range (root %d, freelist %d, high-water mark %d)", bm.root, bm.freelist, bm.pgid)
	}
	return bm, nil
}

// checkBoltFile refuses a bolt file bbolt would fault on, panic on or
// refuse: no valid meta page, shorter than the page count of the meta
// bbolt would use (the valid one with the higher txid), or a page tree
// walkBolt finds damaged. A missing file passes (bolt
// creates it); an empty one is refused (bolt would start it afresh, losing
// the term, vote and log).
func checkBoltFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	size := info.Size()
	if size == 0 {
		return damaged(path, "is empty (0 bytes)")
	}
	m, err := chooseBoltMeta(f)
	if err != nil {
		return damaged(path, "holds no valid bolt meta page (%v)", err)
	}
	if need := int64(m.pgid) * int64(m.pageSize); size < need {
		return damaged(path, "is cut short: %d bytes, but its bolt meta page (transaction %d) records %d pages of %d bytes (%d bytes)",
			size, m.txid, m.pgid, m.pageSize, need)
	}
	if err := walkBolt(f, size, m); err != nil {
		return damaged(path, "is damaged: %v", err)
	}
	return nil
}

// chooseBoltMeta reads both meta pages of r and returns the one bbolt
// would use. Page 1 is one page size in: the size page 0 records, or the
// OS page size when page 0 is unreadable (as bbolt does).
func chooseBoltMeta(r io.ReaderAt) (boltMeta, error) {
	buf := make([]byte, boltPageHeaderSize+boltMetaSize)
	read := func(off int64) (boltMeta, error) {
		if _, err := r.ReadAt(buf, off); err != nil {
			return boltMeta{}, fmt.Errorf("read: %w", err)
		}
		return parseBoltMeta(buf)
	}
	m0, err0 := read(0)
	off := int64(os.Getpagesize())
	if err0 == nil {
		off = int64(m0.pageSize)
	}
	m1, err1 := read(off)
	switch {
	case err0 != nil && err1 != nil:
		return boltMeta{}, fmt.Errorf("page 0: %v; page 1: %v", err0, err1)
	case err0 != nil:
		return m1, nil
	case err1 != nil:
		return m0, nil
	case m1.txid > m0.txid:
		return m1, nil
	}
	return m0, nil
}
