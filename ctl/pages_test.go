package ctl

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestHostListChunks: host list read in pages prints what one answer
// prints (table and -o json), and --chunk-size is validated.
func TestHostListChunks(t *testing.T) {
	testenv.SkipShort(t) // a coordinator process
	c := startCoordinator(t)
	ctx := context.Background()
	if err := c.admin.SetCredentials(ctx, "c1", wire.Credentials{Username: "u", Password: "p"}); err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		h := wire.Host{Name: fmt.Sprintf("r%d-h%02d", i%2+1, i), Rack: fmt.Sprintf("r%d", i%2+1), Online: true,
			BMC: wire.BMC{Address: "redfish+http://127.0.0.1:9001/redfish/v1/Systems/1", Credentials: "c1"}}
		if i == 7 {
			h.Labels = map[string]string{"role": "a-rather-long-label-value-on-a-later-page"}
		}
		if _, _, err := c.admin.ApplyHost(ctx, &h); err != nil {
			t.Fatal(err)
		}
	}
	pages := 0
	err := c.admin.ListHostsPages(ctx, client.HostFilter{}, client.PageOptions{Limit: 5, Summary: true}, func(l *wire.List[wire.Host]) error {
		pages++
		return nil
	})
	if err != nil || pages != 3 {
		t.Fatalf("12 hosts in pages of 5: %d pages, %v", pages, err)
	}

	for _, args := range [][]string{{"host", "list"}, {"host", "list", "-o", "json"}, {"host", "list", "--show-labels"}, {"host", "list", "-o", "yaml"}} {
		whole := c.mustCtl(t, "", append(args, "--chunk-size", "0")...).stdout
		paged := c.mustCtl(t, "", append(args, "--chunk-size", "5")...).stdout
		if paged != whole {
			t.Errorf("%v in pages of 5:\n%s\nin one answer:\n%s", args, paged, whole)
		}
	}
	var l wire.List[wire.Host]
	out := c.mustCtl(t, "", "host", "list", "--chunk-size", "5", "-o", "json").stdout
	if err := json.Unmarshal([]byte(out), &l); err != nil || len(l.Items) != 12 || l.Items[0].BMC.Address == "" {
		t.Fatalf("-o json in pages: %v, %d hosts: %s", err, len(l.Items), out)
	}
	empty := c.mustCtl(t, "", "host", "list", "--chunk-size", "5", "-o", "json", "--rack", "r9").stdout
	if err := json.Unmarshal([]byte(empty), &l); err != nil || len(l.Items) != 0 {
		t.Fatalf("-o json of no hosts: %v: %s", err, empty)
	}
	for _, bad := range []string{"-1", "5001"} {
		if r := c.ctl(t, "", "host", "list", "--chunk-size", bad); r.code != ExitUsage {
			t.Errorf("--chunk-size %s: %s", bad, r)
		}
	}
}

// TestListChunks: the lists other than host list, read a few items a
// request, print what they print in one page (table and -o json);
// --chunk-size is validated; audit reads newest first, as far as --limit.
func TestListChunks(t *testing.T) {
	testenv.SkipShort(t) // a coordinator process
	c := startCoordinator(t)
	ctx := context.Background()
	for i := range 4 {
		if err := c.admin.SetCredentials(ctx, fmt.Sprintf("c%d", i), wire.Credentials{Username: "u", Password: "p"}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.admin.CreateToken(ctx, wire.TokenRequest{Role: wire.RoleViewer, Name: fmt.Sprintf("v%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	h := wire.Host{Name: "r1-h01", Rack: "r1", Online: true, BMC: wire.BMC{Address: "redfish+http://127.0.0.1:9001/redfish/v1/Systems/1", Credentials: "c0"}}
	if _, _, err := c.admin.ApplyHost(ctx, &h); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		a := c.agent(t, "r1", "a1")
		for _, reason := range []string{"Registered", "Inspected"} {
			a.report(t, h.Name, wire.HostStatus{ProvisioningState: wire.StateUnmanaged, OperationalStatus: wire.OpDiscovered}, false, func(r *wire.StatusReport) {
				r.Events = []wire.Event{{Time: time.Now().UTC(), Type: wire.EventNormal, Reason: reason, Message: "from the test agent"}}
			})
		}
		if err := a.cl.ReleaseLease(ctx, "r1", wire.LeaseRequest{Holder: a.holder, Epoch: a.epoch}); err != nil {
			t.Fatal(err)
		}
	}
	lists := [][]string{{"events", "r1-h01"}, {"credentials", "list"}, {"token", "list"}, {"rack", "leases", "r1"}, {"audit", "--limit", "0"}}
	for _, args := range lists {
		for _, o := range [][]string{nil, {"-o", "json"}, {"-o", "yaml"}} {
			cmd := append(append([]string{}, args...), o...)
			whole := c.mustCtl(t, "", cmd...).stdout
			paged := c.mustCtl(t, "", append(cmd, "--chunk-size", "2")...).stdout
			// A later page can widen a column: the cells are the same.
			if fields(paged) != fields(whole) || strings.Count(whole, "\n") < 4 {
				t.Errorf("%v in pages of 2:\n%s\nin one page:\n%s", cmd, paged, whole)
			}
		}
		for _, bad := range []string{"0", "-1", "5001"} {
			if r := c.ctl(t, "", append(args, "--chunk-size", bad)...); r.code != ExitUsage || !strings.Contains(r.stderr, "--chunk-size") {
				t.Errorf("%v --chunk-size %s: %s", args, bad, r)
			}
		}
	}
	if r := c.ctl(t, "", "audit", "--chunk-size", "1001"); r.code != ExitUsage {
		t.Errorf("audit --chunk-size 1001: %s", r)
	}
	var all, five wire.List[wire.AuditRecord]
	if err := json.Unmarshal([]byte(c.mustCtl(t, "", "audit", "--limit", "0", "--chunk-size", "3", "-o", "json").stdout), &all); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(c.mustCtl(t, "", "audit", "--limit", "5", "--chunk-size", "3", "-o", "json").stdout), &five); err != nil {
		t.Fatal(err)
	}
	if len(all.Items) < 15 || len(five.Items) != 5 {
		t.Fatalf("audit: %d records in all, %d with --limit 5", len(all.Items), len(five.Items))
	}
	for i := range all.Items {
		if i > 0 && all.Items[i].Time.After(all.Items[i-1].Time) {
			t.Fatalf("audit record %d is newer than the one before it: not newest first", i)
		}
		if i < 5 && !five.Items[i].Time.Equal(all.Items[i].Time) {
			t.Fatalf("--limit 5 record %d: %+v, want %+v", i, five.Items[i], all.Items[i])
		}
	}
}

// fields is out with every run of blanks one space.
func fields(out string) string {
	var b strings.Builder
	for _, l := range strings.Split(out, "\n") {
		b.WriteString(strings.Join(strings.Fields(l), " ") + "\n")
	}
	return b.String()
}
