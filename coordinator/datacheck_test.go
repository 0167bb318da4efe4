package coordinator

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"go.etcd.io/bbolt"
)

// boltFixture writes a raft.db with entries log entries (bolt, as a member
// keeps it) and returns its bytes.
func boltFixture(t testing.TB, entries int) (string, []byte) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "raft.db")
	st, err := openBolt(p, &bbolt.Options{NoFreelistSync: true, FreelistType: bbolt.FreelistMapType})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= entries; i++ {
		if err := st.StoreLog(&raft.Log{Index: uint64(i), Term: 1, Data: make([]byte, 512)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SetUint64([]byte("CurrentTerm"), 3); err != nil {
		t.Fatal(err)
	}
	st.Close()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, b
}

// The meta-page check on damaged copies of a real raft.db: it never
// panics; a file cut below the pages its meta records, or with both meta
// pages damaged, is refused with ErrDataDamaged naming the file; whatever
// it lets through, bbolt opens and reads without a fault.
func TestCheckBoltFileOnDamagedBytes(t *testing.T) {
	path, good := boltFixture(t, 300)
	if err := checkBoltFile(path); err != nil {
		t.Fatalf("intact raft.db refused: %v", err)
	}
	m, err := chooseBoltMeta(bytesReaderAt(good))
	if err != nil {
		t.Fatal(err)
	}
	need := int(m.pgid) * int(m.pageSize)
	ps := int(m.pageSize)
	rng := rand.New(rand.NewPCG(1, 2))
	damage := []struct {
		name   string
		refuse bool
		do     func([]byte) []byte
	}{
		{"cut below the high-water mark", true, func(b []byte) []byte { return b[:ps*2+rng.IntN(need-ps*2)] }},
		{"cut inside the meta pages", true, func(b []byte) []byte { return b[:rng.IntN(ps*2)] }},
		{"both meta pages flipped", true, func(b []byte) []byte {
			b[boltPageHeaderSize+rng.IntN(56)] ^= 1 << rng.IntN(8)
			b[ps+boltPageHeaderSize+rng.IntN(56)] ^= 1 << rng.IntN(8)
			return b
		}},
		{"both meta pages zeroed", true, func(b []byte) []byte { clear(b[:2*ps]); return b }},
		{"one meta page flipped", false, func(b []byte) []byte {
			b[rng.IntN(2)*ps+boltPageHeaderSize+rng.IntN(56)] ^= 1 << rng.IntN(8)
			return b
		}},
		{"a page header overwritten", false, func(b []byte) []byte {
			p := 2 + rng.IntN(int(m.pgid)-2)
			for j := range boltPageHeaderSize {
				b[p*ps+j] = byte(rng.IntN(256))
			}
			return b
		}},
		{"random bytes anywhere", false, func(b []byte) []byte {
			for range 1 + rng.IntN(8) {
				b[rng.IntN(len(b))] = byte(rng.IntN(256))
			}
			return b
		}},
	}
	dir := t.TempDir()
	for _, d := range damage {
		for i := range 20 {
			b := d.do(append([]byte(nil), good...))
			p := filepath.Join(dir, "raft.db")
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
			err := checkBoltFile(p)
			if d.refuse && (!errors.Is(err, ErrDataDamaged) || !strings.Contains(err.Error(), p)) {
				t.Fatalf("%s (try %d, %d bytes): want ErrDataDamaged naming %s, got %v", d.name, i, len(b), p, err)
			}
			if err == nil {
				// Let through: bbolt must open it without a fault (a
				// damaged page it then reports is a refusal, not a crash).
				if st, err := openBolt(p, &bbolt.Options{NoFreelistSync: true, FreelistType: bbolt.FreelistMapType}); err == nil {
					st.Close()
				} else if !errors.Is(err, ErrDataDamaged) {
					t.Fatalf("%s (try %d): open: %v, want nil or ErrDataDamaged", d.name, i, err)
				}
			}
			os.Remove(p)
		}
	}
}

// FuzzParseBoltMeta: any bytes give a meta or an error, never a panic, and
// a meta it accepts has page ids inside its high-water mark.
func FuzzParseBoltMeta(f *testing.F) {
	_, good := boltFixture(f, 3)
	f.Add(good[:4096])
	f.Add(make([]byte, 80))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseBoltMeta(b)
		if err == nil && (m.root >= m.pgid || m.pageSize == 0) {
			t.Fatalf("accepted %+v", m)
		}
	})
}

type bytesReaderAt []byte

func (b bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(b)) {
		return 0, errors.New("EOF")
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, errors.New("EOF")
	}
	return n, nil
}

// faultGuard turns a read of a mapped file past its end (SIGBUS, what
// bbolt meets in a raft.db cut short) into ErrDataDamaged naming the file.
func TestFaultGuardTurnsFaultIntoRefusal(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mapped")
	if err := os.WriteFile(p, make([]byte, 1<<16), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mem, err := syscall.Mmap(int(f.Fd()), 0, 1<<16, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	if err := os.Truncate(p, 4096); err != nil {
		t.Fatal(err)
	}
	var sink byte
	err = faultGuard(p, func() error { sink = mem[1<<15]; return nil })
	if !errors.Is(err, ErrDataDamaged) || !strings.Contains(err.Error(), p) {
		t.Fatalf("fault: got %v (read %d), want ErrDataDamaged naming %s", err, sink, p)
	}
}

// A damaged newest snapshot falls back to the older one when the log
// reaches back to it (as raft's restore does); when it does not, or no
// snapshot opens, the data dir is refused.
func TestCheckSnapshots(t *testing.T) {
	dir := t.TempDir()
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	_, trans := raft.NewInmemTransport("a")
	for _, idx := range []uint64{10, 20} {
		sink, err := snaps.Create(raft.SnapshotVersionMax, idx, 1, raft.Configuration{}, 1, trans)
		if err != nil {
			t.Fatal(err)
		}
		sink.Write([]byte("state at some index, long enough to damage"))
		if err := sink.Close(); err != nil {
			t.Fatal(err)
		}
	}
	logFrom := func(first uint64) raft.LogStore {
		s := raft.NewInmemStore()
		for i := first; i <= 25; i++ {
			s.StoreLog(&raft.Log{Index: i, Term: 1})
		}
		return s
	}
	if idx, err := checkSnapshots(dir, logFrom(15), snaps); err != nil || idx != 20 {
		t.Fatalf("intact: index %d, %v; want 20, nil", idx, err)
	}
	list, _ := snaps.List()
	newest := filepath.Join(dir, "snapshots", list[0].ID, "state.bin")
	b, _ := os.ReadFile(newest)
	b[3] ^= 0xff
	os.WriteFile(newest, b, 0o600)
	if idx, err := checkSnapshots(dir, logFrom(5), snaps); err != nil || idx != 10 {
		t.Fatalf("newest damaged, log from 5: index %d, %v; want the older snapshot (10), nil", idx, err)
	}
	if _, err := checkSnapshots(dir, logFrom(15), snaps); !errors.Is(err, ErrDataDamaged) || !strings.Contains(err.Error(), "starts at index 15") {
		t.Fatalf("newest damaged, log from 15: %v; want ErrDataDamaged (entries 11 to 14 nowhere)", err)
	}
	older := filepath.Join(dir, "snapshots", list[1].ID, "state.bin")
	b, _ = os.ReadFile(older)
	b[3] ^= 0xff
	os.WriteFile(older, b, 0o600)
	if _, err := checkSnapshots(dir, logFrom(1), snaps); !errors.Is(err, ErrDataDamaged) || !strings.Contains(err.Error(), "none opens") {
		t.Fatalf("both damaged: %v; want ErrDataDamaged (none opens)", err)
	}
}
