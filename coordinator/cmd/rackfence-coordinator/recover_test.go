package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

func putHost(m *member, token, name string) error {
	h := wire.Host{Name: name, Rack: "r1", Online: true, Consumer: name}
	code, err := do("PUT", m.url()+"/v1/hosts/"+name, token, h, nil)
	if err == nil && code != 200 && code != 201 {
		err = fmt.Errorf("PUT %s: %d", name, code)
	}
	return err
}

// tool runs an offline subcommand and returns its output.
func tool(t *testing.T, bin string, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	return string(out), err
}

// TestRecoverLostQuorum: a 3-member cluster loses 2 members; inspect shows
// each survivor's last index, recover (only with the loud flag) makes the
// third a cluster of one that serves writes, keeps every acknowledged
// write, records the recovery in its audit trail, and a new member joins.
func TestRecoverLostQuorum(t *testing.T) {
	bin := testenv.Binary(t, "rackfence-coordinator")
	ms, token := startCluster(t, bin, 3, clusterOpts{})
	for i := range 30 {
		if err := putHost(ms[i%3], token, fmt.Sprintf("h%02d", i)); err != nil {
			t.Fatal(err)
		}
	}
	// Lose two members for good; the survivor cannot write.
	ms[0].proc.Kill()
	ms[1].proc.Kill()
	survivor := ms[2]
	testenv.Eventually(t, 60*time.Second, "writes refused without quorum", func() error {
		if err := putHost(survivor, token, "refused"); err == nil {
			return fmt.Errorf("a write was accepted without a quorum")
		}
		return nil
	})
	survivor.proc.Stop(30 * time.Second)

	out, err := tool(t, bin, "inspect", "--data-dir", survivor.dir, "-o", "json")
	if err != nil {
		t.Fatalf("inspect: %v\n%s", err, out)
	}
	var in coordinator.Inspection
	if err := json.Unmarshal([]byte(out), &in); err != nil {
		t.Fatalf("inspect -o json: %v\n%s", err, out)
	}
	if in.NodeID != "n3" || len(in.Configuration) != 3 || in.Hosts != 30 || in.ClusterID == "" || in.LastIndex == 0 || in.Tier != coordinator.DefaultTier {
		t.Fatalf("inspect: %+v", in)
	}
	if out, err := tool(t, bin, "recover", "--data-dir", survivor.dir); err == nil || !strings.Contains(out, "--i-understand-this-may-lose-writes") {
		t.Fatalf("recover without the confirmation flag: %v\n%s", err, out)
	}
	start := time.Now()
	if out, err := tool(t, bin, "recover", "--data-dir", survivor.dir, "--i-understand-this-may-lose-writes"); err != nil {
		t.Fatalf("recover: %v\n%s", err, out)
	}
	out, _ = tool(t, bin, "inspect", "--data-dir", survivor.dir, "-o", "json")
	if err := json.Unmarshal([]byte(out), &in); err != nil || len(in.Configuration) != 1 || in.Configuration[0].ID != "n3" {
		t.Fatalf("configuration after recover: %+v %v", in.Configuration, err)
	}
	survivor.proc = testenv.Start(t, "n3-recovered", bin, nil, survivor.args...)
	testenv.Eventually(t, 60*time.Second, "the recovered member serving writes", func() error {
		return putHost(survivor, token, "after-recover")
	})
	t.Logf("recover to serving: %s (recover command, restart, first write)", time.Since(start).Round(time.Millisecond))
	var l wire.List[wire.Host]
	if code, err := do("GET", survivor.url()+"/v1/hosts", token, nil, &l); err != nil || code != 200 || len(l.Items) != 31 {
		t.Fatalf("hosts after recover: %d %v %d", code, err, len(l.Items))
	}
	if !strings.Contains(survivor.proc.Output(), "recovered from a lost quorum") {
		t.Errorf("the recovered member did not log its recovery:\n%s", survivor.proc.Output())
	}
	var audit wire.List[wire.AuditRecord]
	if _, err := do("GET", survivor.url()+"/v1/audit", token, nil, &audit); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range audit.Items {
		found = found || r.Route == "rackfence-coordinator recover" && strings.Contains(r.Target, "n1,n2,n3 -> n3")
	}
	if !found {
		t.Errorf("no recover record in the audit trail: %+v", audit.Items)
	}

	// A new member (fresh data dir) joins the recovered cluster.
	fresh := newMember(t, t.TempDir(), 4)
	fresh.args = append(fresh.args, "--join", survivor.url())
	fresh.proc = testenv.Start(t, "n4", bin, []string{"RACKFENCE_TOKEN=" + token}, fresh.args...)
	waitVoters(t, fresh, token, 2)
	if err := putHost(fresh, token, "after-join"); err != nil {
		t.Fatal(err)
	}
}
