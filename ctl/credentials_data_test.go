package ctl

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

const dataHostYAML = `name: h1
rack: r1
userData: {name: web-data}
networkData: {name: web-data}
metaData: {name: keys}
preprovisioningNetworkData: {name: ramdisk-net}
`

// Host files take the data fields; host get names the records and keys;
// a bad record name is refused with the field's name.
func TestHostFileDataFields(t *testing.T) {
	hs, err := parseHosts([]byte(dataHostYAML), func(s string) { t.Errorf("warning: %s", s) })
	if err != nil || len(hs) != 1 {
		t.Fatalf("parse: %v %d", err, len(hs))
	}
	h := hs[0]
	if h.UserData.Name != "web-data" || h.NetworkData.Name != "web-data" || h.MetaData.Name != "keys" || h.PreprovisioningNetworkData.Name != "ramdisk-net" {
		t.Fatalf("parsed %+v", h)
	}
	var b strings.Builder
	hostDetail(&b, &h)
	for _, line := range []string{
		"User data:", "credentials web-data, key userData",
		"Network data:", "credentials web-data, key networkData",
		"Meta data:", "credentials keys, key metaData",
		"Ramdisk network data:", "credentials ramdisk-net, key networkData",
	} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("host get lacks %q:\n%s", line, b.String())
		}
	}
	for _, c := range []struct{ in, err string }{
		{"name: a\nrack: r1\nuserData: {name: Bad_Name}\n", "field userData.name"},
		{"name: a\nrack: r1\nmetaData: {}\n", "field metaData.name"},
	} {
		if _, err := parseHosts([]byte(c.in), func(string) {}); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: %v, want %q", c.in, err, c.err)
		}
	}
}

// credentials set --from-file/--from-literal against a real coordinator:
// the values are stored (keys listed by get and list, with -o json), never
// printed; bad input is a usage error naming the flag.
func TestCredentialsDataCommands(t *testing.T) {
	c := startCoordinator(t)
	dir := t.TempDir()
	const canary = "rf-ctl-data-canary-0b7e"
	ud := filepath.Join(dir, "cloud-init.yaml")
	nd := filepath.Join(dir, "network_data.json")
	os.WriteFile(ud, []byte("#cloud-config\n# "+canary+"\n"), 0o600)
	os.WriteFile(nd, []byte(`{"links":[],"networks":[],"services":[]}`), 0o600)

	r := c.mustCtl(t, "", "credentials", "set", "web-data", "--from-file", "userData="+ud, "--from-file", nd,
		"--from-literal", `metaData={"public_keys":{}}`)
	if !strings.Contains(r.stdout, "credentials/web-data set") || strings.Contains(r.stdout+r.stderr, canary) {
		t.Fatalf("set: %s", r)
	}
	g := c.mustCtl(t, "", "credentials", "get", "web-data")
	if !strings.Contains(g.stdout, "metaData, network_data.json, userData (values sealed, never shown)") || strings.Contains(g.stdout, "Password") ||
		strings.Contains(g.stdout, canary) {
		t.Errorf("get: %s", g)
	}
	g = c.mustCtl(t, "", "credentials", "get", "web-data", "-o", "json")
	var cr wire.Credentials
	if err := json.Unmarshal([]byte(g.stdout), &cr); err != nil || !reflect.DeepEqual(cr.DataKeys, []string{"metaData", "network_data.json", "userData"}) ||
		cr.Data != nil || strings.Contains(g.stdout, canary) {
		t.Fatalf("get -o json: %s (%v)", g, err)
	}
	// Both a BMC login and data.
	c.mustCtl(t, "pw-1\n", "credentials", "set", "both", "--username", "admin", "--password-file", "-", "--from-literal", "value=x")
	l := c.mustCtl(t, "", "credentials", "list")
	for _, want := range []string{"NAME", "DATA KEYS", "both", "admin", "value", "web-data", "metaData,network_data.json,userData"} {
		if !strings.Contains(l.stdout, want) {
			t.Errorf("list lacks %q: %s", want, l)
		}
	}
	l = c.mustCtl(t, "", "credentials", "list", "-o", "json")
	var list wire.List[wire.Credentials]
	if err := json.Unmarshal([]byte(l.stdout), &list); err != nil || len(list.Items) < 2 || strings.Contains(l.stdout, canary) || strings.Contains(l.stdout, "pw-1") {
		t.Fatalf("list -o json: %s (%v)", l, err)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"credentials", "set", "x"}, "--username is required (or --from-file/--from-literal"},
		{[]string{"credentials", "set", "x", "--from-file", "userData=" + filepath.Join(dir, "nope")}, "--from-file userData="},
		{[]string{"credentials", "set", "x", "--from-file", "userData="}, "no file after '='"},
		{[]string{"credentials", "set", "x", "--from-literal", "user data=1"}, `--from-literal: "user data" is not a valid key`},
		{[]string{"credentials", "set", "x", "--from-literal", "novalue"}, "KEY=VALUE"},
		{[]string{"credentials", "set", "x", "--from-literal", "a=1", "--from-literal", "a=2"}, `key "a" is given twice`},
		{[]string{"credentials", "set", "x", "--from-literal", "a=1", "--password-file", ud}, "--password-file needs --username"},
	} {
		if r := c.ctl(t, "", tc.args...); r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: %s, want exit %d and %q", tc.args, r, ExitUsage, tc.want)
		}
	}
	// Nothing was stored.
	if r := c.ctl(t, "", "credentials", "get", "x"); r.code == 0 {
		t.Errorf("a refused set stored a record: %s", r)
	}
}
