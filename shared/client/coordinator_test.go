package client_test

// Every method of the client against real rackfence-coordinator
// processes (testkit/rig): one member for the API surface, three
// (on 127.0.0.1, .2 and .3) for writes sent to followers.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// startMember starts coordinator member id listening on ip
// (testkit/rig, over TLS, no credentials set); with join, a member
// that joins join's cluster.
func startMember(t testing.TB, id, ip string, join *rig.Coordinator) *rig.Coordinator {
	t.Helper()
	return rig.StartCoordinator(t, t.TempDir(), rig.CoordOpts{NodeID: id, IP: ip, Join: join, NoCredentials: true})
}

// adminClient is a client of urls with m's cluster admin token, once the
// cluster has a leader.
func adminClient(t testing.TB, m *rig.Coordinator, urls string) *client.Client {
	t.Helper()
	tok, err := client.ReadTokenFile(m.TokenFile)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(client.Config{Coordinator: urls, Token: tok, UserAgent: "client-test"})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "a leader", func() error {
		st, err := c.Status(context.Background())
		if err != nil {
			return err
		}
		if st.Leader == "" {
			return errors.New("no leader yet")
		}
		return nil
	})
	return c
}

func TestAgainstCoordinator(t *testing.T) {
	ctx := context.Background()
	m := startMember(t, "n1", "127.0.0.1", nil)
	dead := "https://127.0.0.1:" + fmt.Sprint(testenv.FreePort(t, "127.0.0.1"))
	admin := adminClient(t, m, dead+","+m.URL) // the first URL never answers

	if err := admin.Health(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := admin.Status(ctx)
	if err != nil || st.NodeID != "n1" || st.State != "leader" {
		t.Fatalf("status %+v %v", st, err)
	}
	ms, err := admin.Members(ctx)
	if err != nil || len(ms.Items) != 1 || ms.Items[0].ID != "n1" {
		t.Fatalf("members %+v %v", ms, err)
	}

	// Hosts.
	h := &wire.Host{Name: "r1-h01", Rack: "r1", Online: true,
		BMC: wire.BMC{Address: "redfish+http://127.0.0.1:9001/redfish/v1/Systems/1", Credentials: "r1-bmc"}}
	got, created, err := admin.ApplyHost(ctx, h)
	if err != nil || !created || got.CreatedIndex == 0 {
		t.Fatalf("apply: %+v %v %v", got, created, err)
	}
	if _, created, err = admin.ApplyHost(ctx, h); err != nil || created {
		t.Fatalf("re-apply: created=%v %v", created, err)
	}
	if _, _, err := admin.ApplyHost(ctx, &wire.Host{Name: "r1-h01", Rack: "r2"}); !client.IsConflict(err) {
		t.Fatalf("rack move: %v", err)
	}
	if _, _, err := admin.ApplyHost(ctx, &wire.Host{Name: "Bad_Name", Rack: "r1"}); !client.IsBadRequest(err) {
		t.Fatalf("bad name: %v", err)
	}
	if _, err := admin.GetHost(ctx, "nope"); !client.IsNotFound(err) {
		t.Fatalf("get nope: %v", err)
	}
	l, err := admin.ListHosts(ctx, client.HostFilter{Rack: "r1"})
	if err != nil || len(l.Items) != 1 || l.Index == 0 {
		t.Fatalf("list: %+v %v", l, err)
	}
	if l, err := admin.WithStale(true).ListHosts(ctx, client.HostFilter{Rack: "r9"}); err != nil || len(l.Items) != 0 {
		t.Fatalf("stale list: %+v %v", l, err)
	}

	// Credentials and tokens.
	if err := admin.SetCredentials(ctx, "r1-bmc", wire.Credentials{Username: "admin", Password: "pw-1"}); err != nil {
		t.Fatal(err)
	}
	cr, err := admin.GetCredentials(ctx, "r1-bmc")
	if err != nil || cr.Username != "admin" || cr.Password != "" {
		t.Fatalf("get credentials: %+v %v", cr, err)
	}
	if cl, err := admin.ListCredentials(ctx); err != nil || len(cl.Items) != 1 {
		t.Fatalf("list credentials: %+v %v", cl, err)
	}
	tok, err := admin.CreateToken(ctx, wire.TokenRequest{Role: wire.RoleAgent, Rack: "r1"})
	if err != nil || tok.Token == "" || tok.Role != wire.RoleAgent {
		t.Fatalf("token: %+v %v", tok, err)
	}
	agent, _, err := testenv.AgentClient(ctx, client.Config{Coordinator: m.URL, Token: tok.Token}, "agent-1")
	if err != nil {
		t.Fatal(err)
	}
	if cr, err := agent.RevealCredentials(ctx, "r1-bmc"); err != nil || cr.Password != "pw-1" {
		t.Fatalf("reveal: %+v %v", cr, err)
	}
	if cr, err := admin.RevealCredentials(ctx, "r1-bmc"); err != nil || cr.Password != "pw-1" {
		t.Fatalf("admin reveal (host export --include-secrets): %+v %v", cr, err)
	}
	if _, err := agent.Detach(ctx, "r1-h01", wire.IntentRequest{}); !client.IsForbidden(err) {
		t.Fatalf("agent detach: %v", err)
	}
	bad, _ := client.New(client.Config{Coordinator: m.URL, Token: "wrong", CAFile: m.CAFile})
	if _, err := bad.Racks(ctx); !client.IsUnauthorized(err) {
		t.Fatalf("bad token: %v", err)
	}

	// Leases, watch, status reports.
	lease, err := agent.AcquireLease(ctx, "r1", wire.LeaseRequest{Holder: "a1", TTL: wire.Duration(30 * time.Second)})
	if err != nil || lease.Epoch == 0 || lease.Holder != "a1" {
		t.Fatalf("acquire: %+v %v", lease, err)
	}
	if _, err := agent.AcquireLease(ctx, "r1", wire.LeaseRequest{Holder: "a2", TTL: wire.Duration(30 * time.Second)}); !client.IsConflict(err) {
		t.Fatalf("second holder: %v", err)
	}
	if gl, err := admin.GetLease(ctx, "r1"); err != nil || gl.Holder != "a1" {
		t.Fatalf("get lease: %+v %v", gl, err)
	}
	if _, err := agent.RenewLease(ctx, "r1", wire.LeaseRequest{Holder: "a1", Epoch: lease.Epoch, TTL: wire.Duration(30 * time.Second)}); err != nil {
		t.Fatalf("renew: %v", err)
	}
	w, err := agent.Watch(ctx, "r1", 0, 5*time.Second)
	if err != nil || len(w.Hosts) != 1 || w.Lease == nil || w.Lease.Epoch != lease.Epoch {
		t.Fatalf("watch from 0: %+v %v", w, err)
	}
	in, err := admin.Detach(ctx, "r1-h01", wire.IntentRequest{Reason: "test"})
	if err != nil || in.CreatedIndex == 0 {
		t.Fatalf("detach: %+v %v", in, err)
	}
	w2, err := agent.Watch(ctx, "r1", w.Index, 30*time.Second)
	if err != nil || len(w2.Hosts) != 1 || w2.Hosts[0].Intents == nil || w2.Hosts[0].Intents.Detach == nil {
		t.Fatalf("watch after detach: %+v %v", w2, err)
	}
	rep := wire.StatusReport{Epoch: lease.Epoch,
		Status: wire.HostStatus{ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpDetached},
		Acks:   []wire.IntentAck{{Kind: wire.IntentDetach, CreatedIndex: in.CreatedIndex}},
		Events: []wire.Event{{Time: time.Now(), Type: wire.EventNormal, Reason: "Detached", Message: "test"}}}
	if err := agent.ReportStatus(ctx, "r1-h01", rep); err != nil {
		t.Fatalf("report: %v", err)
	}
	hh, _ := admin.GetHost(ctx, "r1-h01")
	if !hh.Intents.Detach.Acknowledged || hh.Status.OperationalStatus != wire.OpDetached {
		t.Fatalf("ack not stored: %+v %+v", hh.Intents.Detach, hh.Status)
	}
	if ev, err := admin.Events(ctx, "r1-h01"); err != nil || len(ev.Items) == 0 || ev.Items[len(ev.Items)-1].Reason != "Detached" {
		t.Fatalf("events: %+v %v", ev, err)
	}
	if err := admin.Attach(ctx, "r1-h01"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Drain(ctx, "r1-h01", wire.IntentRequest{Mode: wire.DrainMaintenance}); err != nil {
		t.Fatal(err)
	}
	if err := admin.Restore(ctx, "r1-h01"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Resume(ctx, "r1-h01", wire.IntentRequest{}); err != nil {
		t.Fatal(err)
	}
	if err := agent.ReleaseLease(ctx, "r1", wire.LeaseRequest{Holder: "a1", Epoch: lease.Epoch}); err != nil {
		t.Fatalf("release: %v", err)
	}
	if err := agent.ReportStatus(ctx, "r1-h01", rep); !client.IsStaleEpoch(err) {
		t.Fatalf("report after release: want stale epoch, got %v", err)
	}
	hist, err := admin.LeaseHistory(ctx, "r1")
	if err != nil || len(hist.Items) != 1 || hist.Items[0].End != "released" {
		t.Fatalf("history: %+v %v", hist, err)
	}
	racks, err := admin.Racks(ctx)
	if err != nil || len(racks.Items) != 1 || racks.Items[0].Hosts != 1 {
		t.Fatalf("racks: %+v %v", racks, err)
	}
	done, err := admin.DeleteHost(ctx, "r1-h01")
	if err != nil {
		t.Fatal(err)
	}
	if !done {
		if h, err := admin.GetHost(ctx, "r1-h01"); err != nil || !h.DeletionRequested {
			t.Fatalf("delete requested but host %+v %v", h, err)
		}
	}

	// No member answers: ErrUnreachable naming the URLs tried.
	m.Proc.Stop(10 * time.Second)
	quick, _ := client.New(client.Config{Coordinator: dead + "," + m.URL, RetryFor: -1})
	_, err = quick.Status(ctx)
	if !errors.Is(err, client.ErrUnreachable) || !strings.Contains(err.Error(), m.URL) || !strings.Contains(err.Error(), dead) {
		t.Fatalf("unreachable: %v", err)
	}
}

// TestWritesThroughFollowers sends writes to each member of a 3-node cluster
// on three loopback addresses: a follower forwards or redirects to the
// leader on another host, and the token must still arrive.
func TestWritesThroughFollowers(t *testing.T) {
	ctx := context.Background()
	m1 := startMember(t, "n1", "127.0.0.1", nil)
	admin := adminClient(t, m1, m1.URL)
	tok, _ := client.ReadTokenFile(m1.TokenFile)
	m2 := startMember(t, "n2", "127.0.0.2", m1)
	m3 := startMember(t, "n3", "127.0.0.3", m1)
	testenv.Eventually(t, 2*time.Minute, "three members", func() error {
		l, err := admin.Members(ctx)
		if err != nil {
			return err
		}
		if len(l.Items) != 3 {
			return fmt.Errorf("%d members", len(l.Items))
		}
		return nil
	})
	for i, m := range []*rig.Coordinator{m1, m2, m3} {
		c, err := client.New(client.Config{Coordinator: m.URL, Token: tok})
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("r1-h%02d", i+1)
		var h *wire.Host
		testenv.Eventually(t, time.Minute, "apply via "+m.NodeID, func() error {
			var err error
			h, _, err = c.ApplyHost(ctx, &wire.Host{Name: name, Rack: "r1"})
			return err
		})
		if h.Name != name {
			t.Fatalf("apply via %s answered %+v", m.NodeID, h)
		}
		if _, err := c.Detach(ctx, name, wire.IntentRequest{Reason: "via " + m.NodeID}); err != nil {
			t.Fatalf("detach via %s: %v", m.NodeID, err)
		}
		got, err := admin.GetHost(ctx, name)
		if err != nil || got.Intents == nil || got.Intents.Detach == nil || got.Intents.Detach.Reason != "via "+m.NodeID {
			t.Fatalf("host after writes via %s: %+v %v", m.NodeID, got, err)
		}
	}
}
