package api

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/coordinator/pivot"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/coordtest/member"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestPivotBetweenTiers runs two one-node clusters (tiers a and b) over
// real TCP and hands a host from a to b: detach, the agent's ack, creation
// in b with a handoff b confirms with a, pivotedTo recorded in a; a forged
// handoff is refused.
func TestPivotBetweenTiers(t *testing.T) {
	testenv.SkipShort(t) // two in-process tiers: seconds, not the fast layer
	dirA, dirB := t.TempDir(), t.TempDir()
	portA, portB := testenv.FreePort(t, "127.0.0.1"), testenv.FreePort(t, "127.0.0.2")
	urlA, urlB := fmt.Sprintf("http://127.0.0.1:%d", portA), fmt.Sprintf("http://127.0.0.2:%d", portB)
	// Each tier's peer token file is written once the other tier made its
	// admin token; peers read token files at start, so start a, then b
	// (knowing a's token), then restart a's API knowing b's token.
	start := func(id, ip, dir string, port int, tier, peer, peerURL string) *node {
		tweak := func(c *Config) { c.Tier = tier }
		tf := filepath.Join(t.TempDir(), "peer.token")
		if peerTok, err := os.ReadFile(filepath.Join(peerDir(dirA, dirB, peer), coordinator.AdminTokenFile)); err == nil {
			os.WriteFile(tf, peerTok, 0o600)
			peers, err := pivot.NewPeers(tier, map[string]string{peer: peerURL}, map[string]string{peer: tf})
			if err != nil {
				t.Fatal(err)
			}
			tweak = func(c *Config) { c.Tier, c.Pivot = tier, peers }
		}
		n := startNode(t, member.Config{ID: id, IP: ip, Dir: dir, Bootstrap: true, HTTPPort: port}, tweak)
		testenv.Eventually(t, 30*time.Second, tier+" ready", func() error {
			if !n.store.Ready() {
				return fmt.Errorf("not ready")
			}
			return nil
		})
		return n
	}
	a := start("a1", "127.0.0.1", dirA, portA, "a", "b", urlB)
	b := start("b1", "127.0.0.2", dirB, portB, "b", "a", urlA)
	a.stop()
	a = start("a1", "127.0.0.1", dirA, portA, "a", "b", urlB)
	tokA, tokB := readTok(t, dirA), readTok(t, dirB)

	must(t, 201, "PUT", urlA+"/v1/hosts/h1", tokA, testHost("h1", "r1"), nil)
	agent := newToken(t, urlA, tokA, wire.RoleAgent, "r1")
	var l wire.Lease
	must(t, 200, "POST", urlA+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "ag", TTL: wire.Duration(30 * time.Second)}, &l)
	hw := &wire.HardwareDetails{Manufacturer: "sim", CPUs: []wire.CPU{{Model: "x", Cores: 4}}}
	must(t, 200, "PUT", urlA+"/v1/hosts/h1/status", agent, wire.StatusReport{Epoch: l.Epoch,
		Status: wire.HostStatus{ProvisioningState: wire.StateProvisioned, OperationalStatus: wire.OpOK, PoweredOn: true, HardwareDetails: hw}}, nil)

	// A firmware task on the host's BMC holds the pivot back until it ends.
	var h1 wire.Host
	must(t, 200, "GET", urlA+"/v1/hosts/h1", tokA, nil, &h1)
	must(t, 200, "POST", urlA+"/v1/hosts/h1/task", agent, wire.BMCTaskRequest{Epoch: l.Epoch, CreatedIndex: h1.CreatedIndex,
		Kind: wire.BMCTaskFirmware, TaskURI: "/redfish/v1/TaskService/Tasks/1", Component: "bmc"}, nil)
	if d := errBody(t, must(t, 409, "POST", urlA+"/v1/hosts/h1/pivot", tokA, wire.PivotRequest{To: "b"}, nil)); d.Code != wire.CodeBMCTaskRunning ||
		!strings.Contains(d.Message, "detach it with --force first and pivot again") || !strings.Contains(d.Message, "unbootable") {
		t.Fatalf("pivot during a firmware task: %+v", d)
	}
	must(t, 200, "DELETE", urlA+"/v1/hosts/h1/task", agent, wire.BMCTaskEnd{Epoch: l.Epoch, Outcome: wire.BMCTaskSucceeded}, nil)

	var pr wire.PivotProgress
	must(t, 200, "POST", urlA+"/v1/hosts/h1/pivot", tokA, wire.PivotRequest{To: "b"}, &pr)
	if pr.Phase != wire.PivotDetaching || pr.DetachIndex == 0 {
		t.Fatalf("first step: %+v", pr)
	}
	must(t, 404, "GET", urlB+"/v1/hosts/h1", tokB, nil, nil)
	// A forged handoff (the detach is not acknowledged) is refused by b.
	forged := testHost("h1", "r1")
	forged.Handoff = &wire.Handoff{SourceTier: "a", SourceClusterID: a.store.FSM().ClusterID(), DetachIndex: pr.DetachIndex, Confirmed: true}
	if d := errBody(t, must(t, 409, "PUT", urlB+"/v1/hosts/h1", tokB, forged, nil)); !strings.Contains(d.Message, "confirm") && !strings.Contains(d.Message, "acknowledged") {
		t.Logf("refusal: %s", d.Message)
	}
	must(t, 200, "PUT", urlA+"/v1/hosts/h1/status", agent, wire.StatusReport{Epoch: l.Epoch,
		Status: wire.HostStatus{ProvisioningState: wire.StateProvisioned, OperationalStatus: wire.OpDetached, HardwareDetails: hw},
		Acks:   []wire.IntentAck{{Kind: wire.IntentDetach, CreatedIndex: pr.DetachIndex}}}, nil)
	must(t, 200, "POST", urlA+"/v1/hosts/h1/pivot", tokA, wire.PivotRequest{To: "b"}, &pr)
	if pr.Phase != wire.PivotHandedOff {
		t.Fatalf("second step: %+v", pr)
	}
	var hb, ha wire.Host
	must(t, 200, "GET", urlB+"/v1/hosts/h1", tokB, nil, &hb)
	if hb.Handoff == nil || !hb.Handoff.Confirmed || !hb.ExternallyProvisioned || hb.Status == nil || hb.Status.HardwareDetails == nil || hb.Status.HardwareDetails.Manufacturer != "sim" {
		t.Fatalf("in b: %+v", hb)
	}
	must(t, 200, "GET", urlA+"/v1/hosts/h1", tokA, nil, &ha)
	if ha.PivotedTo != "b" || ha.Intents == nil || ha.Intents.Detach == nil {
		t.Fatalf("in a: %+v", ha)
	}
	// b's GET applied back keeps the confirmed handoff without asking a.
	hb.Status = nil
	must(t, 200, "PUT", urlB+"/v1/hosts/h1", tokB, hb, nil)
	_ = b
}

func peerDir(dirA, dirB, peer string) string {
	if peer == "a" {
		return dirA
	}
	return dirB
}

func readTok(t *testing.T, dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, coordinator.AdminTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
