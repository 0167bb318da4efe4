package procstat

import (
	"os"
	"runtime"
	"testing"
	"time"
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
	if CPUSeconds(pid) <= 0 {
		t.Fatalf("CPUSeconds(self) = %f", CPUSeconds(pid))
	}
	if RSSKiB(-1) != -1 || CPUTicks(-1) != -1 || RSSMiB(-1) != -1 || CPUSeconds(-1) != -1 {
		t.Fatal("a process that does not exist must read -1")
	}
}
