package procstat

import (
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestOwnProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	pid := os.Getpid()
	if kib := RSSKiB(pid); kib <= 0 {
		t.Fatalf("RSSKiB(self) = %d", kib)
	}
	if mib := RSSMiB(pid); mib <= 0 {
		t.Fatalf("RSSMiB(self) = %f", mib)
	}
	before := CPUTicks(pid)
	for end := time.Now().Add(100 * time.Millisecond); time.Now().Before(end); {
	}
	if after := CPUTicks(pid); before < 0 || after <= before {
		t.Fatalf("CPUTicks(self) %d then %d after 100 ms of spinning", before, after)
	}
	if n, ok := Nice(pid); !ok || n < -20 || n > 19 {
		t.Fatalf("Nice(self) = %d, %v", n, ok)
	}
	if sys := SystemTicks(pid); sys < 0 || sys > CPUTicks(pid) {
		t.Fatalf("SystemTicks(self) = %d, CPUTicks %d", sys, CPUTicks(pid))
	}
	// Touching fresh pages faults them in: the count must grow by about
	// one per page.
	// (A mapping of its own, without huge pages, so that a machine with
	// transparent huge pages always on faults once per 4 KiB too.)
	buf, err := unix.Mmap(-1, 0, 8<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(buf)
	if err := unix.Madvise(buf, unix.MADV_NOHUGEPAGE); err != nil {
		t.Fatal(err)
	}
	f0 := MinorFaults(pid)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	if f1 := MinorFaults(pid); f0 < 0 || f1-f0 < 1000 {
		t.Fatalf("MinorFaults(self) %d then %d after touching 2,048 fresh pages", f0, f1)
	}
	if CPUSeconds(pid) <= 0 {
		t.Fatalf("CPUSeconds(self) = %f", CPUSeconds(pid))
	}
	if RSSKiB(-1) != -1 || CPUTicks(-1) != -1 || MinorFaults(-1) != -1 || SystemTicks(-1) != -1 || RSSMiB(-1) != -1 || CPUSeconds(-1) != -1 {
		t.Fatal("a process that does not exist must read -1")
	}
}
