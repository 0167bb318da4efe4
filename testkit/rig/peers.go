package rig

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/rackfence/rackfence/testkit/testenv"
)

// peerStartTimeout bounds the start of a real peer (a script's own wait
// included): generous, for -race on 2 cores.
const peerStartTimeout = 90 * time.Second

// peerScript is the path of deploy/peers/NAME.
func peerScript(name string) string {
	return filepath.Join(testenv.Root(), "deploy", "peers", name)
}

// runPeerScript runs deploy/peers/NAME ARGS... with env added and returns
// its output. WATCH_PID and IRONIC_WATCH_PID name this process, so the
// peer it starts stops when the test binary dies before its cleanup.
func runPeerScript(name string, env []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), peerStartTimeout+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, peerScript(name), args...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("WATCH_PID=%d", os.Getpid()), fmt.Sprintf("IRONIC_WATCH_PID=%d", os.Getpid()))
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out), nil
}

// ipmitoolPowerStatus asks the IPMI BMC on 127.0.0.1:port for its power
// status over lanplus (admin / password, cipher suite 3), one try.
func ipmitoolPowerStatus(port int) error {
	out, err := exec.Command("ipmitool", "-I", "lanplus", "-H", "127.0.0.1", "-p", fmt.Sprint(port),
		"-U", "admin", "-P", "password", "-C", "3", "-N", "1", "-R", "1", "chassis", "power", "status").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}
