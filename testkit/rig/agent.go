package rig

import (
	"testing"
	"time"

	"github.com/rackfence/rackfence/testkit/testenv"
)

// AgentOpts configure StartAgent.
type AgentOpts struct {
	// Coordinator is --coordinator: one API URL or a comma-separated list
	// of a cluster's members. Required.
	Coordinator string
	// TokenFile is --token-file, the agent token of Rack. Required.
	TokenFile string
	// Rack and ID are --rack and --agent-id. Required.
	Rack, ID string
	// LeaseTTL is --lease-ttl (default 5s).
	LeaseTTL time.Duration
	// LogLevel is --log-level ("": the binary's default).
	LogLevel string
	// AuditFile is --audit-file, the guard's record ("": none).
	AuditFile string
	// Bin is the agent binary (default the project's rackfence-agent, of
	// testenv.Binary; a rolling upgrade passes an older release's).
	Bin string
	// Args are extra flags.
	Args []string
}

// StartAgent runs a rackfence-agent process with o; it stops at the
// test's cleanup and skips under -short, like every starter of a real
// process. It does not wait: the agent's effects (a lease, host statuses)
// are what tests wait for.
func StartAgent(t testing.TB, o AgentOpts) *testenv.Process {
	t.Helper()
	if o.Coordinator == "" || o.TokenFile == "" || o.Rack == "" || o.ID == "" {
		t.Fatalf("rig: AgentOpts needs Coordinator, TokenFile, Rack and ID (got %+v)", o)
	}
	if o.LeaseTTL == 0 {
		o.LeaseTTL = 5 * time.Second
	}
	name := "agent " + o.ID
	if o.Bin == "" {
		o.Bin = testenv.Binary(t, "rackfence-agent")
	} else {
		name += " (" + o.Bin + ")"
	}
	args := []string{"--coordinator", o.Coordinator, "--token-file", o.TokenFile, "--rack", o.Rack, "--agent-id", o.ID,
		"--lease-ttl", o.LeaseTTL.String()}
	if o.LogLevel != "" {
		args = append(args, "--log-level", o.LogLevel)
	}
	if o.AuditFile != "" {
		args = append(args, "--audit-file", o.AuditFile)
	}
	return testenv.Start(t, name, o.Bin, nil, append(args, o.Args...)...)
}
