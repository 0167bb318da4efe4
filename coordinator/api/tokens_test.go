package api

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/coordtest/member"
	"github.com/rackfence/rackfence/testkit/testenv"
)

func TestTokenLifecycleAPI(t *testing.T) {
	pin := strings.Repeat("ab", 32)
	n := startNode(t, member.Config{ID: "n1", IP: "127.0.0.1", Dir: t.TempDir(), Bootstrap: true}, func(c *Config) { c.CAPin = pin })
	testenv.Eventually(t, 30*time.Second, "leader ready", func() error {
		if !n.store.Ready() {
			return os.ErrNotExist
		}
		return nil
	})
	raw, err := os.ReadFile(filepath.Join(n.dir, coordinator.AdminTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	admin, u := strings.TrimSpace(string(raw)), n.url

	// Validation names the field.
	for _, c := range []struct{ body, field string }{
		{`{"role":"viewer","ttl":"soon"}`, "ttl"},
		{`{"role":"viewer","ttl":"-5m"}`, "ttl"},
		{`{"role":"viewer","ttl":"100000h"}`, "ttl"},
		{`{"role":"viewer","name":"Bad Name"}`, "name"},
		{`{"role":"agent"}`, "rack"},
		{`{"role":"viewer","rack":"r1"}`, "rack"},
		{`{"role":"root"}`, "role"},
	} {
		if d := errBody(t, must(t, 400, "POST", u+"/v1/tokens", admin, c.body, nil)); d.Field != c.field {
			t.Errorf("%s: field %q, want %q (%s)", c.body, d.Field, c.field, d.Message)
		}
	}

	// Create: the text pins the CA; only the secret authenticates, with or
	// without the pin.
	var ag wire.TokenResponse
	before := time.Now()
	must(t, 201, "POST", u+"/v1/tokens", admin, wire.TokenRequest{Role: wire.RoleAgent, Rack: "r1", TTL: "1h", Name: "agent-r1-a"}, &ag)
	secret, gotPin := wire.ParseToken(ag.Token)
	if gotPin != pin || len(ag.ID) != fsm.TokenIDLen || ag.Name != "agent-r1-a" || secret == ag.Token {
		t.Fatalf("created %+v", ag)
	}
	if ag.ExpiresAt.Before(before.Add(59*time.Minute)) || ag.ExpiresAt.After(time.Now().Add(61*time.Minute)) {
		t.Fatalf("expiresAt %v", ag.ExpiresAt)
	}
	must(t, 200, "GET", u+"/v1/status", ag.Token, nil, nil)
	must(t, 200, "GET", u+"/v1/status", secret, nil, nil)

	// List: ids and times, never a secret or a hash.
	var l wire.List[wire.Token]
	raw = must(t, 200, "GET", u+"/v1/tokens", admin, nil, &l)
	if strings.Contains(string(raw), secret) || strings.Contains(string(raw), fsm.HashToken(secret)) ||
		strings.Contains(string(raw), fsm.HashToken(admin)) {
		t.Fatalf("the list leaks a secret or a hash: %s", raw)
	}
	if len(l.Items) != 2 || l.Items[0].Role != wire.RoleAdmin || l.Items[0].CreatedAt.IsZero() || l.Items[1].ID != ag.ID || l.Items[1].Rack != "r1" {
		t.Fatalf("list %s", raw)
	}
	must(t, 403, "GET", u+"/v1/tokens", ag.Token, nil, nil)

	// Revoke: unknown id 404, bad id 400, then the token stops working.
	if d := errBody(t, must(t, 400, "DELETE", u+"/v1/tokens/XYZ", admin, nil, nil)); d.Field != "id" {
		t.Fatal(d)
	}
	must(t, 404, "DELETE", u+"/v1/tokens/0123456789abcdef", admin, nil, nil)
	must(t, 200, "DELETE", u+"/v1/tokens/"+ag.ID, admin, nil, nil)
	if d := errBody(t, must(t, 401, "GET", u+"/v1/status", ag.Token, nil, nil)); !strings.Contains(d.Message, "token create") {
		t.Fatal(d)
	}
	must(t, 404, "DELETE", u+"/v1/tokens/"+ag.ID, admin, nil, nil)

	// The last admin token cannot be revoked.
	adminID := l.Items[0].ID
	if d := errBody(t, must(t, 409, "DELETE", u+"/v1/tokens/"+adminID, admin, nil, nil)); !strings.Contains(d.Message, "last valid admin token") {
		t.Fatal(d)
	}
	var a2 wire.TokenResponse
	must(t, 201, "POST", u+"/v1/tokens", admin, wire.TokenRequest{Role: wire.RoleAdmin}, &a2)
	must(t, 200, "DELETE", u+"/v1/tokens/"+adminID, a2.Token, nil, nil)
	must(t, 401, "GET", u+"/v1/tokens", admin, nil, nil)

	// Expiry: a 1s token works, then answers 401 saying it expired.
	var short wire.TokenResponse
	must(t, 201, "POST", u+"/v1/tokens", a2.Token, wire.TokenRequest{Role: wire.RoleViewer, TTL: "1s"}, &short)
	must(t, 200, "GET", u+"/v1/hosts", short.Token, nil, nil)
	var expired []byte
	testenv.Eventually(t, 30*time.Second, "the 1s token refused", func() error {
		code, raw := call(t, "GET", u+"/v1/hosts", short.Token, nil, nil)
		if code != 401 {
			return fmt.Errorf("answered %d", code)
		}
		expired = raw
		return nil
	})
	if time.Now().Before(short.ExpiresAt) {
		t.Fatalf("the token was refused before its expiry %v", short.ExpiresAt)
	}
	d := errBody(t, expired)
	if !strings.Contains(d.Message, "expired at") || !strings.Contains(d.Message, "rackfencectl token create --role viewer") {
		t.Fatalf("expired: %s", d.Message)
	}
	raw = must(t, 200, "GET", u+"/v1/tokens", a2.Token, nil, nil)
	var l2 wire.List[wire.Token]
	json.Unmarshal(raw, &l2)
	if got := l2.Items[len(l2.Items)-1]; got.ID != short.ID || !got.Expired {
		t.Fatalf("expired token listed as %+v", got)
	}
}

// TestLastUsedIsFlushed checks that a use reaches the FSM through the
// leader's batched TouchTokensCmd (interval shortened for the test).
func TestLastUsedIsFlushed(t *testing.T) {
	testenv.SkipShort(t) // waits for the batched lastUsed flush: seconds, not the fast layer
	n, admin := startLeader(t, "127.0.0.1")
	v := newToken(t, n.url, admin, wire.RoleViewer, "")
	var l wire.List[wire.Token]
	must(t, 200, "GET", n.url+"/v1/tokens", admin, nil, &l)
	id := l.Items[1].ID
	if !l.Items[1].LastUsed.IsZero() {
		t.Fatalf("a token never used has lastUsed %v", l.Items[1].LastUsed)
	}
	must(t, 200, "GET", n.url+"/v1/hosts", v, nil, nil)
	// The default flush interval is 30s.
	testenv.Eventually(t, 90*time.Second, "lastUsed written", func() error {
		ti, ok := n.store.FSM().TokenByID(id)
		if !ok || ti.LastUsed.IsZero() {
			return os.ErrNotExist
		}
		if time.Since(ti.LastUsed) > 2*time.Minute || ti.LastUsed.Second() != 0 {
			t.Fatalf("lastUsed %v is not this minute", ti.LastUsed)
		}
		return nil
	})
}
