// Package rig starts rackfence's real processes for process-level tests:
// coordinators (one per tier, and members that join one), a
// rackfence-bmcsim, and rack agents, with the helpers tests use to drive
// and observe them. Everything is a real binary on loopback; nothing is
// faked. For an in-process coordinator, use testkit/coordtest.
package rig

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// Ctx returns a context bounded by a generous deadline, cancelled at cleanup.
func Ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

var listening = regexp.MustCompile(`listening on 127\.0\.0\.1:(\d+)-`)

// Sim is a running rackfence-bmcsim.
type Sim struct {
	T     testing.TB
	Base  int
	N     int
	Audit string
	Proc  *testenv.Process
}

// StartSim starts n simulated BMCs (user admin / password password) with an
// audit file in dir; extra are more rackfence-bmcsim flags.
func StartSim(t testing.TB, dir string, n int, latency time.Duration, extra ...string) *Sim {
	t.Helper()
	s := &Sim{T: t, N: n, Audit: filepath.Join(dir, "bmc-audit.jsonl")}
	args := []string{"--hosts", strconv.Itoa(n), "--base-port", "0", "--audit", s.Audit}
	if latency > 0 {
		args = append(args, "--latency", latency.String())
	}
	args = append(args, extra...)
	s.Proc = testenv.Start(t, "bmcsim", testenv.Binary(t, "rackfence-bmcsim"), nil, args...)
	testenv.Eventually(t, 60*time.Second, "bmcsim serving", func() error {
		if s.Proc.Exited() {
			t.Fatalf("bmcsim exited:\n%s", s.Proc.Output())
		}
		m := listening.FindStringSubmatch(s.Proc.Output())
		if m == nil {
			return fmt.Errorf("no listening line yet")
		}
		s.Base, _ = strconv.Atoi(m[1])
		_, err := s.State(n - 1)
		return err
	})
	return s
}

// Address is the BMC address of simulator index i.
func (s *Sim) Address(i int) string {
	return fmt.Sprintf("redfish+http://127.0.0.1:%d/redfish/v1/Systems/1", s.Base+i)
}

// MAC is the boot MAC of simulator index i.
func (s *Sim) MAC(i int) string { return fmt.Sprintf("52:54:00:00:%02x:%02x", i>>8, i&0xff) }

// Host is a host spec on rack using BMC i, credentials "bmc".
func (s *Sim) Host(name, rack string, i int) *wire.Host {
	return &wire.Host{Name: name, Rack: rack, Online: true,
		BMC: wire.BMC{Address: s.Address(i), Credentials: "bmc"}, BootMACAddress: s.MAC(i)}
}
