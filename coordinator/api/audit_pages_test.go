package api

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/rackfence/rackfence/internal/jsonl"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/coordtest/member"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// The audit trail read page by page: the newest records first, every
// record of the trail as it was at the first page once, records written
// meanwhile left out; tokens from another member or into a file rotated
// away are list_expired (410), bad ones name the field.
func TestAuditPages(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a member")
	}
	dir := t.TempDir()
	n := startNode(t, member.Config{ID: "n1", IP: "127.0.0.1", Dir: dir, Bootstrap: true}, func(c *Config) { c.AuditMaxBytes = 8192 })
	testenv.Eventually(t, 30*time.Second, "leader", func() error {
		if !n.store.Ready() {
			return fmt.Errorf("not ready")
		}
		return nil
	})
	admin, u := adminTokenOf(t, n), n.url
	put := func(k int) {
		for i := 0; i < k; i++ {
			must(t, 200, "PUT", u+"/v1/hosts/h1", admin, testHost("h1", "r1"), nil)
		}
	}
	must(t, 201, "PUT", u+"/v1/hosts/h1", admin, testHost("h1", "r1"), nil)
	put(24)
	path := filepath.Join(dir, "audit.log")
	before, err := jsonl.Read[wire.AuditRecord](path)
	if err != nil {
		t.Fatal(err)
	}
	page := func(limit int, cont string) wire.List[wire.AuditRecord] {
		q := url.Values{wire.ParamLimit: {fmt.Sprint(limit)}}
		if cont != "" {
			q.Set(wire.ParamContinue, cont)
		}
		var l wire.List[wire.AuditRecord]
		must(t, 200, "GET", u+"/v1/audit?"+q.Encode(), admin, nil, &l)
		return l
	}
	var all []wire.AuditRecord
	l := page(7, "")
	first := l.Continue
	put(5) // after the first page: not in the later ones
	pages := 1
	for {
		if len(l.Items) > 7 {
			t.Fatalf("page %d holds %d records, limit 7", pages, len(l.Items))
		}
		all = append(l.Items, all...)
		if l.Continue == "" {
			break
		}
		l = page(7, l.Continue)
		pages++
	}
	if len(all) != len(before) || pages != (len(before)+6)/7 {
		t.Fatalf("%d records in %d pages, the trail held %d at the first page", len(all), pages, len(before))
	}
	for i := range all {
		if !all[i].Time.Equal(before[i].Time) || all[i].Route != before[i].Route {
			t.Fatalf("record %d: %+v, want %+v", i, all[i], before[i])
		}
	}

	// Bad requests name the field; a token of another member or into a
	// file rotated away is list_expired.
	for _, q := range []string{"limit=0", "limit=1001", "limit=x"} {
		if d := errBody(t, must(t, 400, "GET", u+"/v1/audit?"+q, admin, nil, nil)); d.Field != wire.ParamLimit {
			t.Fatalf("%s: %+v", q, d)
		}
	}
	hostTok := listToken{Version: listTokenVersion, Index: 5, After: "h1"}.encode()
	for _, c := range []string{"garbage", hostTok} {
		if d := errBody(t, must(t, 400, "GET", u+"/v1/audit?continue="+c, admin, nil, nil)); d.Field != wire.ParamContinue {
			t.Fatalf("continue=%s: %+v", c, d)
		}
	}
	raw, _ := base64.RawURLEncoding.DecodeString(first)
	var tok auditToken
	if err := json.Unmarshal(raw, &tok); err != nil || tok.Member != "n1" {
		t.Fatalf("token %s: %+v %v", raw, tok, err)
	}
	tok.Member = "n2"
	if d := errBody(t, must(t, 410, "GET", u+"/v1/audit?continue="+tok.encode(), admin, nil, nil)); d.Code != wire.CodeListExpired {
		t.Fatal(d)
	}
	put(120) // two rotations at least: first's file is gone
	if d := errBody(t, must(t, 410, "GET", u+"/v1/audit?continue="+first, admin, nil, nil)); d.Code != wire.CodeListExpired {
		t.Fatal(d)
	}
	// Without continue, limit is still the newest records.
	if l := page(3, ""); len(l.Items) != 3 || l.Continue == "" || l.Items[2].Route != "/v1/hosts/:name" {
		t.Fatalf("newest 3: %+v", l)
	}
}
