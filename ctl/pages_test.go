package ctl

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

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
