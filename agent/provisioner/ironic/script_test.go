package ironic_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/rig"
)

// deploy/peers/ironic.sh fails loudly, with the log's tail, when Ironic
// cannot start (here: its port is taken), and stop/status of a stopped
// Ironic are harmless.
func TestIronicScriptFailsLoudly(t *testing.T) {
	needIronic(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	cmd := exec.Command(rig.IronicScript(), "start", dir, fmt.Sprint(port))
	cmd.Env = append(os.Environ(), "IRONIC_START_TIMEOUT=60", fmt.Sprintf("IRONIC_WATCH_PID=%d", os.Getpid()))
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err == nil {
		exec.Command(rig.IronicScript(), "stop", dir).Run()
		t.Fatalf("start on a taken port succeeded:\n%s", out)
	}
	if !strings.Contains(string(out), "---- last lines of") {
		t.Fatalf("start failed without the log's tail (%v):\n%s", err, out)
	}
	t.Logf("failed after %s as expected:\n%s", time.Since(start).Round(time.Second), out)
	if _, err := os.Stat(dir + "/ironic.pid"); err == nil {
		t.Fatal("a pid file was left behind by a failed start")
	}
	if out, err := exec.Command(rig.IronicScript(), "stop", dir).CombinedOutput(); err != nil {
		t.Fatalf("stop of a stopped Ironic: %v\n%s", err, out)
	}
	if err := exec.Command(rig.IronicScript(), "status", dir).Run(); err == nil {
		t.Fatal("status of a stopped Ironic exited 0")
	}
	if err := exec.Command(rig.IronicScript(), "frobnicate", dir).Run(); err == nil {
		t.Fatal("an unknown command exited 0")
	}
}
