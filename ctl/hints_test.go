package ctl

import (
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// A refused operation on one host prints its error once, and a hint only
// when it follows from that error: the rack's lease holder is named for a
// host no agent has registered, not for a refusal about the host's state.
func TestRefusalHints(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator")
	}
	c := startCoordinator(t)
	c.mustCtl(t, "", "host", "apply", "-f", "testdata/hosts.yaml")
	ag := c.agent(t, "r1", "agent-r1-hints")
	ag.report(t, "r1-h01", wire.HostStatus{ProvisioningState: wire.StateProvisioned, OperationalStatus: wire.OpOK, PoweredOn: true}, false)

	r := c.ctl(t, "", "inspect", "r1-h01")
	if r.code != ExitConflict || strings.Count(r.stderr, "only an available host") != 1 {
		t.Errorf("inspect of a provisioned host: want the error once, got %s", r)
	}
	if strings.Contains(r.stderr, "held by") || strings.Contains(r.stderr, "hint:") {
		t.Errorf("inspect of a provisioned host: a hint that does not follow from the error: %s", r)
	}

	r = c.ctl(t, "", "reboot", "r1-h02")
	if r.code != ExitConflict || !strings.Contains(r.stderr, "not been registered") || !strings.Contains(r.stderr, "hint: rack r1 is held by agent-r1-hints") {
		t.Errorf("reboot of an unregistered host: want the rack's holder as a hint, got %s", r)
	}
}

// A wait that times out says what holds each host: the consumer a drain
// waits for, not the agent.
func TestTimeoutHints(t *testing.T) {
	drain := &wire.Intent{Mode: wire.DrainMaintenance}
	ps := []*hostProgress{{name: "r1-web", now: &wire.Host{Name: "r1-web", Consumer: "k8s/node-7",
		Intents: &wire.Intents{Drain: drain}, Status: &wire.HostStatus{ProvisioningState: wire.StateProvisioned, OperationalStatus: wire.OpOK}}}}
	err := timeoutError(goalMaintenance, ps, 0)
	var b strings.Builder
	for _, h := range timeoutHints(goalMaintenance, ps) {
		b.WriteString(h + "\n")
	}
	if !strings.Contains(err.Error(), `consumer "k8s/node-7"`) || !strings.Contains(b.String(), `r1-web (consumer "k8s/node-7")`) || strings.Contains(b.String(), "agent running") {
		t.Errorf("drain blocked by a consumer: %v\nhints:\n%s", err, b.String())
	}
	ps[0].now.Consumer = ""
	if h := timeoutHints(goalMaintenance, ps); len(h) != 1 || !strings.Contains(h[0], "agent running") {
		t.Errorf("unacknowledged drain without a consumer: %q", h)
	}
	ps[0].lastErr = "power management error (count 1): power-off: timeout"
	if h := timeoutHints(goalMaintenance, ps); len(h) != 1 || !strings.Contains(h[0], "resume") {
		t.Errorf("host in error: %q", h)
	}
}

// The intent commands' help names Ironic only as what happens with
// --provisioner ironic: the direct provisioner has no Ironic node.
func TestIntentHelpIronicOnlyWithIronic(t *testing.T) {
	for _, path := range []string{"detach", "drain", "restore"} {
		long := strings.Join(strings.Fields(commands[path].long), " ")
		for _, sentence := range strings.Split(long, "; ") {
			if strings.Contains(sentence, "Ironic") && !strings.Contains(sentence, "--provisioner ironic") {
				t.Errorf("%s --help speaks of Ironic as if every rack ran it: %q", path, sentence)
			}
		}
	}
}
