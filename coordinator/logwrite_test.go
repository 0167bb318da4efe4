package coordinator

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/raft"
)

// A failed append is recorded (naming the data dir, the error and the
// fix) and wrapped in ErrLogWrite; the next append that succeeds clears
// it, a delete that succeeds does not.
func TestLogWritesRecordsAndClears(t *testing.T) {
	st := &countingStore{LogStore: raft.NewInmemStore()}
	w := newLogWrites("/var/lib/rf", slog.New(slog.NewTextHandler(io.Discard, nil)))
	logs := newLogCache(watchedLogs{LogStore: st, w: w})
	if err := logs.StoreLogs(entries(1, 2, 1)); err != nil {
		t.Fatal(err)
	}
	if p := w.problem(); p != "" {
		t.Fatalf("problem after a good write: %q", p)
	}
	st.fail = &os.PathError{Op: "write", Path: "/var/lib/rf/raft.db", Err: syscall.ENOSPC}
	for range 3 {
		err := logs.StoreLogs(entries(3, 1, 1))
		if !errors.Is(err, ErrLogWrite) || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "/var/lib/rf") {
			t.Fatalf("failed append returned %v; want ErrLogWrite wrapping ENOSPC, naming the data dir", err)
		}
	}
	p := w.problem()
	for _, want := range []string{"/var/lib/rf", "no space left on device", "3 failed writes", "df -h /var/lib/rf"} {
		if !strings.Contains(p, want) {
			t.Errorf("problem %q does not say %q", p, want)
		}
	}
	if failing, total := w.state(); !failing || total != 3 {
		t.Errorf("state = %v, %d; want true, 3", failing, total)
	}
	st.fail = nil
	if err := logs.DeleteRange(1, 1); err != nil {
		t.Fatal(err)
	}
	if w.problem() == "" {
		t.Error("a successful delete cleared the failure; only an append proves the log can be written")
	}
	if err := logs.StoreLogs(entries(3, 1, 1)); err != nil {
		t.Fatal(err)
	}
	if failing, total := w.state(); failing || total != 3 || w.problem() != "" {
		t.Errorf("after a good append: failing %v, total %d, problem %q; want false, 3, none", failing, total, w.problem())
	}
}
