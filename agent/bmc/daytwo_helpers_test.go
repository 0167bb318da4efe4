package bmc

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// dayTwoSim starts one BMC of profile with knobs and dials it with a
// lease of epoch 7 (User-Agent carrying it) and a fast task poll.
type dayTwoRig struct {
	sim   *bmcsim.Sim
	c     *Conn
	g     *guard.Guard
	audit string
}

func startDayTwo(t *testing.T, profile string, k bmcsim.Knobs) *dayTwoRig {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a BMC simulator")
	}
	audit := filepath.Join(t.TempDir(), "sim-audit.jsonl")
	sim := startSim(t, bmcsim.Config{Hosts: 1, Profile: profile, AuditPath: audit, PowerOn: true, Knobs: k})
	g, lease := leasedGuard(10*time.Minute, nil)
	c, err := Dial(testCtx(t), Target{Address: sim.Address(0), Username: "admin", Password: "password"},
		Options{Timeout: 10 * time.Second, MutationTimeout: 10 * time.Second, TaskPollInterval: 20 * time.Millisecond,
			UserAgent: AgentUserAgent("test", "agent-a", "r1", lease)})
	if err != nil {
		t.Fatalf("dial %s: %v", profile, err)
	}
	t.Cleanup(func() { _ = c.Close(testCtx(t)) })
	return &dayTwoRig{sim: sim, c: c, g: g, audit: audit}
}

// mutations are the sim's audit lines other than GET, by method and path.
func (r *dayTwoRig) mutations(t *testing.T) []bmcsim.AuditLine {
	t.Helper()
	lines, err := bmcsim.ReadAudit(r.audit)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}
