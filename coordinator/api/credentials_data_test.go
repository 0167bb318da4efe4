package api

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestCredentialsDataOverHTTP: a data-only record (no username), its
// validation (every error names the field), GET and list show the keys and
// never a value, reveal returns the data to an agent whose rack has a host
// naming the record in a data field (not only bmc.credentials), re-encryption
// moves the data to the new key, and the audit trail holds no value.
func TestCredentialsDataOverHTTP(t *testing.T) {
	orig := testSecrets.Get()
	defer testSecrets.Set(orig)
	n, admin := startLeader(t, "127.0.0.1")
	u := n.url
	op := newToken(t, u, admin, wire.RoleOperator, "")
	viewer := newToken(t, u, admin, wire.RoleViewer, "")
	agent := newToken(t, u, admin, wire.RoleAgent, "r1")
	agent2 := newToken(t, u, admin, wire.RoleAgent, "r2")
	const canary = "rf-api-data-canary-51d0"
	data := map[string]string{"userData": "#cloud-config\n# " + canary + "\n", "networkData": `{"links":[],"networks":[],"services":[]}`}

	var cr wire.Credentials
	raw := must(t, 201, "PUT", u+"/v1/credentials/ud1", admin, wire.Credentials{Data: data}, &cr)
	if !reflect.DeepEqual(cr.DataKeys, []string{"networkData", "userData"}) || bytes.Contains(raw, []byte(canary)) {
		t.Fatalf("PUT answer: %s", raw)
	}
	// With a username and password too.
	must(t, 201, "PUT", u+"/v1/credentials/both", admin, wire.Credentials{Username: "root", Password: "pw", Data: map[string]string{"value": "x"}}, nil)

	for _, c := range []struct{ body, field, msg string }{
		{`{"password":"p"}`, "username", "required"},
		{`{}`, "username", "required"},
		{`{"data":{}}`, "username", "required"},
		{`{"data":{"user data":"x"}}`, "data.user data", "not a valid key"},
		{`{"data":{"":"x"}}`, "data", "empty key"},
		{`{"data":{"` + strings.Repeat("k", 254) + `":"x"}}`, "data", "at most 253"},
		{`{"data":{"userData":"` + strings.Repeat("x", wire.MaxCredentialsData) + `"}}`, "data", "at most"},
		{`{"data":{"userData":1}}`, "data", "string"},
		{`{"data":{"userData":"x"},"dataKeys":["userData"]}`, "dataKeys", "read-only"},
	} {
		raw := must(t, 400, "PUT", u+"/v1/credentials/bad", admin, c.body, nil)
		if d := errBody(t, raw); d.Field != c.field || !strings.Contains(d.Message, c.msg) {
			t.Errorf("%.80s: field %q message %q, want field %q containing %q", c.body, d.Field, d.Message, c.field, c.msg)
		}
	}
	must(t, 404, "GET", u+"/v1/credentials/bad", admin, nil, nil)

	// GET and list: keys, never values.
	raw = must(t, 200, "GET", u+"/v1/credentials/ud1", viewer, nil, &cr)
	if !reflect.DeepEqual(cr.DataKeys, []string{"networkData", "userData"}) || cr.Data != nil || bytes.Contains(raw, []byte(canary)) {
		t.Fatalf("GET: %s", raw)
	}
	var l wire.List[wire.Credentials]
	raw = must(t, 200, "GET", u+"/v1/credentials", viewer, nil, &l)
	if bytes.Contains(raw, []byte(canary)) || len(l.Items) != 2 || !reflect.DeepEqual(l.Items[1].DataKeys, []string{"networkData", "userData"}) {
		t.Fatalf("list: %s", raw)
	}

	// Host fields: names validated with the field's name.
	for _, c := range []struct{ body, field string }{
		{`{"rack":"r1","userData":{"name":"UD"}}`, "userData.name"},
		{`{"rack":"r1","networkData":{"name":""}}`, "networkData.name"},
		{`{"rack":"r1","metaData":{}}`, "metaData.name"},
		{`{"rack":"r1","preprovisioningNetworkData":{"name":"a_b"}}`, "preprovisioningNetworkData.name"},
		{`{"rack":"r1","userData":{"name":"ud1","key":"x"}}`, "userData.key"},
	} {
		raw := must(t, 400, "PUT", u+"/v1/hosts/h1", op, c.body, nil)
		if d := errBody(t, raw); d.Field != c.field {
			t.Errorf("%s: field %q, want %q (%s)", c.body, d.Field, c.field, raw)
		}
	}

	// Reveal: only for an agent of a rack whose host names the record.
	must(t, 403, "GET", u+"/v1/credentials/ud1?reveal=true", agent, nil, nil)
	h := testHost("h1", "r1")
	h.MetaData = &wire.SecretReference{Name: "ud1"}
	var got wire.Host
	must(t, 201, "PUT", u+"/v1/hosts/h1", op, h, &got)
	if got.MetaData == nil || got.MetaData.Name != "ud1" {
		t.Fatalf("host answer: %+v", got)
	}
	must(t, 403, "GET", u+"/v1/credentials/ud1?reveal=true", agent2, nil, nil)
	must(t, 403, "GET", u+"/v1/credentials/ud1?reveal=true", op, nil, nil) // admins may (host export --include-secrets), operators not
	reveal := func() {
		t.Helper()
		var cr wire.Credentials
		must(t, 200, "GET", u+"/v1/credentials/ud1?reveal=true", agent, nil, &cr)
		if !reflect.DeepEqual(cr.Data, data) || cr.Username != "" || cr.DataKeys != nil {
			t.Fatalf("reveal: %+v", cr)
		}
	}
	reveal()

	// Re-encryption moves the data too (the old key can then go).
	k2, _ := orig.WithNewKey()
	testSecrets.Set(k2)
	var res wire.ReencryptResult
	must(t, 200, "POST", u+"/v1/secrets/reencrypt", admin, nil, &res)
	if res.Resealed != 2 || len(res.Failed) != 0 {
		t.Fatalf("reencrypt: %+v", res)
	}
	c, _ := n.store.FSM().Credentials("ud1")
	if c.Data == nil || c.Data.KeyID != k2.Primary() {
		t.Fatalf("data not re-sealed: %+v", c)
	}
	if res2 := must(t, 200, "POST", u+"/v1/secrets/reencrypt", admin, nil, &res); res.Resealed != 0 || res.Unchanged != 2 {
		t.Fatalf("second reencrypt: %s", res2)
	}
	reveal()

	// The audit trail names the record, never a value.
	raw = must(t, 200, "GET", u+"/v1/audit", admin, nil, nil)
	if !bytes.Contains(raw, []byte("name=ud1")) || bytes.Contains(raw, []byte(canary)) {
		t.Fatalf("audit: %s", raw)
	}
}
