package configdrive

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
	"time"
)

// A small ISO 9660 writer: level 2 names (up to 31 characters) for the
// plain ISO view and Rock Ridge (RRIP 1991A: SP and ER in the root's "."
// record, PX and NM in every record) for the lowercase long names Linux
// and cloud-init see. It writes only what a config drive needs: a few
// directories and small files, every directory in one sector. The layout:
//
//	0-15  system area (zeros)
//	16    primary volume descriptor
//	17    volume descriptor set terminator
//	18    path table (little-endian), 19 path table (big-endian)
//	20…   one sector per directory, breadth first
//	…     file data, each file from a sector boundary
const sector = 2048

// isoFile is one file of the image, by its slash-separated path.
type isoFile struct {
	path string
	data []byte
}

type isoDir struct {
	name     string // Rock Ridge name; "" for the root
	parent   *isoDir
	dirs     []*isoDir
	files    []*isoEntry
	lba      uint32
	num      uint16 // path table number (1 = root)
	children []*isoEntry
}

type isoEntry struct {
	rrName  string
	isoName string
	dir     *isoDir // nil for a file
	data    []byte
	lba     uint32
}

// Rock Ridge extension reference (RRIP 1991A, the texts mkisofs writes).
const (
	erID  = "RRIP_1991A"
	erDes = "THE ROCK RIDGE INTERCHANGE PROTOCOL PROVIDES SUPPORT FOR POSIX FILE SYSTEM SEMANTICS"
	erSrc = "PLEASE CONTACT DISC PUBLISHER FOR SPECIFICATION SOURCE"
)

// writeISO returns an ISO 9660 image labelled label holding files; t is
// every record's date.
func writeISO(label string, files []isoFile, t time.Time) ([]byte, error) {
	if len(label) > 32 {
		return nil, fmt.Errorf("volume label %q is longer than 32 characters", label)
	}
	root := &isoDir{}
	for _, f := range files {
		parts := strings.Split(strings.Trim(f.path, "/"), "/")
		d := root
		for _, p := range parts[:len(parts)-1] {
			d = d.subdir(p)
		}
		d.files = append(d.files, &isoEntry{rrName: parts[len(parts)-1], data: f.data})
	}
	// Breadth-first directory order (the path table's), children sorted
	// by ISO name as ISO 9660 requires.
	order := []*isoDir{root}
	for i := 0; i < len(order); i++ {
		d := order[i]
		d.num = uint16(i + 1)
		if err := d.sortChildren(); err != nil {
			return nil, err
		}
		order = append(order, d.dirs...)
	}
	next := uint32(20)
	for _, d := range order {
		if d.recordsSize() > sector {
			return nil, fmt.Errorf("directory %q has too many entries for one sector", d.name)
		}
		d.lba = next
		next++
	}
	for _, d := range order {
		for _, e := range d.children {
			if e.dir != nil {
				e.lba = e.dir.lba
				continue
			}
			e.lba = next
			next += uint32((len(e.data) + sector - 1) / sector)
		}
	}
	img := make([]byte, int(next)*sector)
	pt := pathTable(order, binary.LittleEndian)
	copy(img[18*sector:], pt)
	copy(img[19*sector:], pathTable(order, binary.BigEndian))
	for _, d := range order {
		d.write(img[int(d.lba)*sector:], t)
		for _, e := range d.children {
			if e.dir == nil {
				copy(img[int(e.lba)*sector:], e.data)
			}
		}
	}
	writePVD(img[16*sector:], label, next, uint32(len(pt)), root, t)
	term := img[17*sector:]
	term[0] = 255
	copy(term[1:], "CD001")
	term[6] = 1
	return img, nil
}

func (d *isoDir) subdir(name string) *isoDir {
	for _, s := range d.dirs {
		if s.name == name {
			return s
		}
	}
	s := &isoDir{name: name, parent: d}
	d.dirs = append(d.dirs, s)
	return s
}

// sortChildren names the children in ISO 9660 and sorts them.
func (d *isoDir) sortChildren() error {
	d.children = d.children[:0]
	seen := map[string]string{}
	add := func(e *isoEntry) error {
		if prev, ok := seen[e.isoName]; ok {
			return fmt.Errorf("%q and %q have the same ISO 9660 name %s", prev, e.rrName, e.isoName)
		}
		seen[e.isoName] = e.rrName
		d.children = append(d.children, e)
		return nil
	}
	for _, s := range d.dirs {
		if err := add(&isoEntry{rrName: s.name, isoName: isoName(s.name, true), dir: s}); err != nil {
			return err
		}
	}
	for _, f := range d.files {
		f.isoName = isoName(f.rrName, false)
		if err := add(f); err != nil {
			return err
		}
	}
	sort.Slice(d.children, func(i, j int) bool { return d.children[i].isoName < d.children[j].isoName })
	return nil
}

// isoName maps a name to ISO 9660 level 2 d-characters: upper case,
// anything else '_', a file gets NAME.EXT;1.
func isoName(name string, dir bool) string {
	up := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			return r
		case r == '.' && !dir:
			return r
		}
		return '_'
	}, name)
	if dir {
		if len(up) > 31 {
			up = up[:31]
		}
		return up
	}
	base, ext := up, ""
	if i := strings.LastIndexByte(up, '.'); i >= 0 {
		base, ext = up[:i], up[i+1:]
	}
	base = strings.ReplaceAll(base, ".", "_")
	if len(base)+len(ext) > 29 {
		base = base[:29-min(len(ext), 29)]
	}
	return base + "." + ext + ";1"
}

// Rock Ridge PX mode bits.
const (
	modeDir  = 0o040555
	modeFile = 0o100444
)

func (d *isoDir) recordsSize() int {
	n := dirRecordLen(1, d.dotSU(true)) + dirRecordLen(1, pxEntry(modeDir, 2))
	for _, e := range d.children {
		n += dirRecordLen(len(e.isoName), e.su())
	}
	return n
}

// write writes d's records into its sector.
func (d *isoDir) write(b []byte, t time.Time) {
	parent := d.parent
	if parent == nil {
		parent = d
	}
	off := 0
	off += putDirRecord(b[off:], []byte{0}, d.lba, sector, true, t, d.dotSU(d.parent == nil))
	off += putDirRecord(b[off:], []byte{1}, parent.lba, sector, true, t, pxEntry(modeDir, parent.links()))
	for _, e := range d.children {
		size := uint32(len(e.data))
		if e.dir != nil {
			size = sector
		}
		off += putDirRecord(b[off:], []byte(e.isoName), e.lba, size, e.dir != nil, t, e.su())
	}
}

func (d *isoDir) links() uint32 { return uint32(2 + len(d.dirs)) }

// dotSU is the system use area of the "." record: SP and ER on the root.
func (d *isoDir) dotSU(root bool) []byte {
	var su []byte
	if root {
		su = append(su, 'S', 'P', 7, 1, 0xBE, 0xEF, 0)
	}
	su = append(su, pxEntry(modeDir, d.links())...)
	if root {
		su = append(su, 'E', 'R', byte(8+len(erID)+len(erDes)+len(erSrc)), 1,
			byte(len(erID)), byte(len(erDes)), byte(len(erSrc)), 1)
		su = append(su, erID+erDes+erSrc...)
	}
	return su
}

// su is an entry's Rock Ridge system use area: PX and NM.
func (e *isoEntry) su() []byte {
	mode, links := uint32(modeFile), uint32(1)
	if e.dir != nil {
		mode, links = modeDir, e.dir.links()
	}
	su := pxEntry(mode, links)
	su = append(su, 'N', 'M', byte(5+len(e.rrName)), 1, 0)
	return append(su, e.rrName...)
}

func pxEntry(mode, links uint32) []byte {
	b := []byte{'P', 'X', 36, 1}
	for _, v := range []uint32{mode, links, 0, 0} {
		b = both32(b, v)
	}
	return b
}

func both32(b []byte, v uint32) []byte {
	b = binary.LittleEndian.AppendUint32(b, v)
	return binary.BigEndian.AppendUint32(b, v)
}

func both16(b []byte, v uint16) []byte {
	b = binary.LittleEndian.AppendUint16(b, v)
	return binary.BigEndian.AppendUint16(b, v)
}

func dirRecordLen(idLen int, su []byte) int {
	n := 33 + idLen
	if n%2 == 1 {
		n++
	}
	n += len(su)
	if n%2 == 1 {
		n++
	}
	return n
}

// putDirRecord writes one directory record and returns its length.
func putDirRecord(b, id []byte, lba, size uint32, dir bool, t time.Time, su []byte) int {
	n := dirRecordLen(len(id), su)
	r := make([]byte, 0, n)
	r = append(r, byte(n), 0)
	r = both32(r, lba)
	r = both32(r, size)
	u := t.UTC()
	r = append(r, byte(u.Year()-1900), byte(u.Month()), byte(u.Day()), byte(u.Hour()), byte(u.Minute()), byte(u.Second()), 0)
	flags := byte(0)
	if dir {
		flags = 2
	}
	r = append(r, flags, 0, 0)
	r = both16(r, 1)
	r = append(r, byte(len(id)))
	r = append(r, id...)
	if len(r)%2 == 1 {
		r = append(r, 0)
	}
	r = append(r, su...)
	copy(b, r)
	return n
}

func pathTable(order []*isoDir, bo binary.AppendByteOrder) []byte {
	var pt []byte
	for _, d := range order {
		id := []byte(isoName(d.name, true))
		parent := uint16(1)
		if d.parent == nil {
			id = []byte{0}
		} else {
			parent = d.parent.num
		}
		pt = append(pt, byte(len(id)), 0)
		pt = bo.AppendUint32(pt, d.lba)
		pt = bo.AppendUint16(pt, parent)
		pt = append(pt, id...)
		if len(id)%2 == 1 {
			pt = append(pt, 0)
		}
	}
	return pt
}

func writePVD(b []byte, label string, blocks, ptSize uint32, root *isoDir, t time.Time) {
	pad := func(off, n int, s string) {
		copy(b[off:off+n], s+strings.Repeat(" ", n-len(s)))
	}
	b[0] = 1
	copy(b[1:], "CD001")
	b[6] = 1
	pad(8, 32, "LINUX")
	pad(40, 32, label)
	copy(b[80:], both32(nil, blocks))
	copy(b[120:], both16(nil, 1))
	copy(b[124:], both16(nil, 1))
	copy(b[128:], both16(nil, sector))
	copy(b[132:], both32(nil, ptSize))
	binary.LittleEndian.PutUint32(b[140:], 18)
	binary.BigEndian.PutUint32(b[148:], 19)
	putDirRecord(b[156:], []byte{0}, root.lba, sector, true, t, nil)
	pad(190, 128, "")
	pad(318, 128, "")
	pad(446, 128, "")
	pad(574, 128, "RACKFENCE")
	pad(702, 37, "")
	pad(739, 37, "")
	pad(776, 37, "")
	date := t.UTC().Format("20060102150405") + "00"
	copy(b[813:], date)
	copy(b[830:], date)
	copy(b[847:], "0000000000000000")
	copy(b[864:], "0000000000000000")
	b[881] = 1
}
