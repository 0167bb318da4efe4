package rig

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"testing"

	"github.com/rackfence/rackfence/testkit/testenv"
)

// ErrNoIronic is LaunchIronic's error when /usr/bin/ironic (Debian's
// python3-ironic) is not installed.
var ErrNoIronic = errors.New("/usr/bin/ironic (python3-ironic) is not installed")

// Ironic is one standalone OpenStack Ironic started by
// deploy/peers/ironic.sh (API and conductor in one process, sqlite,
// noauth) on a free loopback port; IRONIC_WATCH_PID stops it when the test
// binary dies before its cleanup.
type Ironic struct {
	URL  string // http://127.0.0.1:PORT
	Port int
	Dir  string // the state directory (ironic.conf, ironic.sqlite, logs)
	// owned: Stop removes Dir (LaunchIronic made it).
	owned bool
}

// IronicScript is the path of deploy/peers/ironic.sh.
func IronicScript() string { return peerScript("ironic.sh") }

// StartIronic starts an Ironic with its state in a t.TempDir() and stops
// it on cleanup. It skips under -short; a missing Ironic
// fails in CI and skips loudly elsewhere.
func StartIronic(t testing.TB) *Ironic {
	t.Helper()
	_, err := os.Stat("/usr/bin/ironic")
	testenv.RequirePeer(t, err == nil, ErrNoIronic.Error())
	ir := &Ironic{Dir: t.TempDir(), Port: testenv.FreePort(t, "127.0.0.1")}
	if _, err := ir.Script("start", fmt.Sprint(ir.Port)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ir.Stop() })
	ir.URL = fmt.Sprintf("http://127.0.0.1:%d", ir.Port)
	return ir
}

// LaunchIronic is StartIronic for a TestMain (no testing.TB): the state
// lives in a new temp dir named after tag, removed by Stop, which the
// caller must call. It returns ErrNoIronic when Ironic is not installed
// (the caller turns that into testenv.RequirePeer in each test).
func LaunchIronic(tag string) (*Ironic, error) {
	if _, err := os.Stat("/usr/bin/ironic"); err != nil {
		return nil, ErrNoIronic
	}
	dir, err := os.MkdirTemp("", "rackfence-ironic-"+tag+"-")
	if err != nil {
		return nil, err
	}
	ir := &Ironic{Dir: dir, owned: true}
	for try := 0; ; try++ {
		ir.Port, err = testenv.NextFreePort("127.0.0.1")
		if err == nil {
			_, err = ir.Script("start", fmt.Sprint(ir.Port))
		}
		if err == nil {
			break
		}
		if try == 2 {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	ir.URL = fmt.Sprintf("http://127.0.0.1:%d", ir.Port)
	return ir, nil
}

// Script runs deploy/peers/ironic.sh CMD DIR [ARGS...] (start, stop, wipe,
// status) on this Ironic's state dir and returns its output.
func (ir *Ironic) Script(cmd string, args ...string) (string, error) {
	return runPeerScript("ironic.sh", nil, append([]string{cmd, ir.Dir}, args...)...)
}

// Stop stops Ironic (and removes its state dir when LaunchIronic made it).
func (ir *Ironic) Stop() error {
	_, err := ir.Script("stop")
	if ir.owned {
		os.RemoveAll(ir.Dir)
	}
	return err
}

// IronicNode is a node as GET /v1/nodes lists it.
type IronicNode struct {
	UUID           string `json:"uuid"`
	Name           string `json:"name"`
	ProvisionState string `json:"provision_state"`
	Maintenance    bool   `json:"maintenance"`
}

// Nodes lists the Ironic's nodes.
func (ir *Ironic) Nodes(t testing.TB) []IronicNode {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, ir.URL+"/v1/nodes?fields=uuid,name,provision_state,maintenance", nil)
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.81")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Nodes []IronicNode }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Nodes
}

// NodeStatus answers GET /v1/nodes/ID's status code (404: node gone).
func (ir *Ironic) NodeStatus(t testing.TB, id string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, ir.URL+"/v1/nodes/"+id, nil)
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.81")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
