package api

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/seal"
	"github.com/rackfence/rackfence/shared/wire"
)

// TestSecretsRotationOverHTTP walks the documented rotation: add a key
// (the reload a SIGHUP does), re-encrypt, drop the old key; and what a
// member lacking the key answers.
func TestSecretsRotationOverHTTP(t *testing.T) {
	orig := testSecrets.Get()
	defer testSecrets.Set(orig)
	n, admin := startLeader(t, "127.0.0.1")
	u := n.url
	op := newToken(t, u, admin, wire.RoleOperator, "")
	agent := newToken(t, u, admin, wire.RoleAgent, "r1")
	must(t, 201, "PUT", u+"/v1/hosts/h1", op, testHost("h1", "r1"), nil)
	must(t, 201, "PUT", u+"/v1/credentials/c1", admin, wire.Credentials{Username: "root", Password: "rotate-me-pw"}, nil)
	reveal := func(want string) {
		t.Helper()
		var cr wire.Credentials
		must(t, 200, "GET", u+"/v1/credentials/c1?reveal=true", agent, nil, &cr)
		if cr.Password != want || cr.Username != "root" {
			t.Fatalf("reveal: %+v", cr)
		}
	}
	reveal("rotate-me-pw")

	for _, tok := range []string{op, agent} {
		must(t, 403, "GET", u+"/v1/secrets", tok, nil, nil)
		must(t, 403, "POST", u+"/v1/secrets/reencrypt", tok, nil, nil)
		must(t, 403, "POST", u+"/v1/cluster/snapshot", tok, nil, nil)
	}
	var st wire.SecretsStatus
	raw := must(t, 200, "GET", u+"/v1/secrets", admin, nil, &st)
	k1 := orig.Primary()
	if st.Primary != k1 || len(st.Keys) != 1 || st.Keys[0].Credentials != 1 || !st.Keys[0].Loaded || st.Credentials != 1 || st.NodeID != "n1" {
		t.Fatalf("status: %s", raw)
	}
	if bytes.Contains(raw, orig.Marshal()[len(orig.Marshal())-20:]) {
		t.Fatal("status shows key material")
	}

	// 1. Add a key on every member (here the only one) and reload.
	k2ring, _ := orig.WithNewKey()
	testSecrets.Set(k2ring)
	must(t, 200, "GET", u+"/v1/secrets", admin, nil, &st)
	if st.Primary != k2ring.Primary() || len(st.Keys) != 2 || st.Keys[0].Credentials != 1 || st.Keys[1].Credentials != 0 {
		t.Fatalf("after adding a key: %+v", st)
	}
	reveal("rotate-me-pw")
	// 2. Re-encrypt.
	var res wire.ReencryptResult
	must(t, 200, "POST", u+"/v1/secrets/reencrypt", admin, nil, &res)
	if res.Primary != k2ring.Primary() || res.Resealed != 1 || res.Unchanged != 0 || len(res.Failed) != 0 {
		t.Fatalf("reencrypt: %+v", res)
	}
	must(t, 200, "GET", u+"/v1/secrets", admin, nil, &st)
	if st.Keys[0].Credentials != 0 || st.Keys[1].Credentials != 1 {
		t.Fatalf("after reencrypt: %+v", st)
	}
	// 3. Remove the old key once it seals nothing.
	lines := strings.Split(string(k2ring.Marshal()), "\n")
	var kept []string
	for _, l := range lines {
		if !strings.HasPrefix(l, k1+" ") {
			kept = append(kept, l)
		}
	}
	only2, err := seal.Parse([]byte(strings.Join(kept, "\n")))
	if err != nil || only2.Has(k1) {
		t.Fatal(err)
	}
	testSecrets.Set(only2)
	reveal("rotate-me-pw")

	// A member whose key file lacks the key: 503 naming the key and what to do.
	stranger, _ := seal.Generate()
	testSecrets.Set(stranger)
	raw = must(t, 503, "GET", u+"/v1/credentials/c1?reveal=true", agent, nil, nil)
	if d := errBody(t, raw); d.Code != wire.CodeSecretsKeyMissing || !strings.Contains(d.Message, k2ring.Primary()) || !strings.Contains(d.Message, "SIGHUP") {
		t.Fatalf("missing key: %s", raw)
	}
	raw = must(t, 200, "POST", u+"/v1/secrets/reencrypt", admin, nil, &res)
	if len(res.Failed) != 1 || res.Failed[0].Name != "c1" || !strings.Contains(res.Failed[0].Error, k2ring.Primary()) {
		t.Fatalf("reencrypt without the key: %s", raw)
	}
	// No key at all: a PUT cannot seal and says so; nothing is written.
	testSecrets.Set(nil)
	raw = must(t, 503, "PUT", u+"/v1/credentials/c2", admin, wire.Credentials{Username: "u", Password: "p"}, nil)
	if d := errBody(t, raw); d.Code != wire.CodeSecretsKeyMissing || !strings.Contains(d.Message, "no secrets key") {
		t.Fatalf("put without key: %s", raw)
	}
	must(t, 404, "GET", u+"/v1/credentials/c2", admin, nil, nil)

	var snap wire.SnapshotResult
	must(t, 200, "POST", u+"/v1/cluster/snapshot", admin, nil, &snap)
	if snap.Index == 0 || snap.NodeID != "n1" {
		t.Fatalf("snapshot: %+v", snap)
	}
}
