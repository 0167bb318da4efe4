package importer

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestIronicMapping: driver_info to BMC addresses, refusals by name, hints
// and states, without an Ironic.
func TestIronicMapping(t *testing.T) {
	yes, no := true, false
	nodes := []ironicNode{
		{UUID: "u1", Name: "a", Driver: "redfish", ProvisionState: "active", PowerState: "power on",
			DriverInfo: map[string]any{"redfish_address": "10.0.0.1:8443", "redfish_system_id": "redfish/v1/Systems/S1", "redfish_verify_ca": "False", "redfish_username": "admin"},
			Properties: map[string]any{"capabilities": "boot_mode:uefi,secure_boot:true", "root_device": map[string]any{"size": json.Number("200"), "rotational": "false", "serial": "s== ABC"}}},
		{UUID: "u2", Name: "b", Driver: "ipmi", ProvisionState: "manageable", AutomatedClean: &no,
			DriverInfo: map[string]any{"ipmi_address": "fd00::7", "ipmi_port": json.Number("6230")}, Properties: map[string]any{"capabilities": map[string]any{"boot_mode": "bios"}}},
		{UUID: "u3", Name: "c", Driver: "idrac", ProvisionState: "available", DriverInfo: map[string]any{"drac_address": "10.0.0.3"}},
		{UUID: "u4", Name: "d", Driver: "redfish", ProvisionState: "available", AutomatedClean: &yes,
			DriverInfo: map[string]any{"redfish_address": "https://10.0.0.4"}, Properties: map[string]any{"root_device": map[string]any{"size": "<= 10"}}},
		{UUID: "u5", Name: "e", Driver: "redfish", ProvisionState: "clean failed"},
		{UUID: "u6", Name: "f", Driver: "ipmi", ProvisionState: "enroll", DriverInfo: map[string]any{"ipmi_address": "10.0.0.6"},
			InstanceInfo: map[string]any{"image_source": "6b3f-glance-id"}},
	}
	ports := []ironicPort{{Address: "52:54:00:00:00:0B", NodeUUID: "u2", PXEEnabled: &yes}, {Address: "52:54:00:00:00:0c", NodeUUID: "u2", PXEEnabled: &no}}
	creds := ironicCreds{"a": {Password: "pa"}, "ipmi://[fd00::7]:6230": {Username: "u", Password: "pb"}, "10.0.0.6": {Username: "x", Password: "pf"}, "zzz": {Password: "p"}}
	in, skipped := ConvertIronic(nodes, ports, IronicOptions{Rack: "r1", Creds: creds})
	got := map[string]PlannedHost{}
	for _, h := range in.Hosts {
		got[h.Host.Name] = h
	}
	a := got["a"].Host
	if a.BMC.Address != "redfish://10.0.0.1:8443/redfish/v1/Systems/S1" || !a.BMC.DisableCertificateVerification || !a.ExternallyProvisioned || !a.Online ||
		a.BootMode != "UEFISecureBoot" || a.RootDeviceHints == nil || a.RootDeviceHints.MinSizeGigabytes != 200 || a.RootDeviceHints.SerialNumber != "ABC" ||
		a.RootDeviceHints.Rotational == nil || *a.RootDeviceHints.Rotational {
		t.Errorf("a: %+v", a)
	}
	if r := in.Records["a-bmc"]; r.Username != "admin" || r.Password != "pa" {
		t.Errorf("a-bmc: %+v (username from driver_info)", r)
	}
	b := got["b"].Host
	if b.BMC.Address != "ipmi://[fd00::7]:6230" || b.BootMode != "legacy" || b.BootMACAddress != "52:54:00:00:00:0b" || b.AutomatedCleaningMode != "disabled" || b.ExternallyProvisioned {
		t.Errorf("b: %+v", b)
	}
	if r := in.Records["b-bmc"]; r.Username != "u" || r.Password != "pb" {
		t.Errorf("b-bmc (keyed by the rackfence address): %+v", r)
	}
	if f := got["f"].Host; f.Image != nil || f.BMC.Credentials != "f-bmc" || in.Records["f-bmc"].Password != "pf" {
		t.Errorf("f: %+v, record %+v", f, in.Records["f-bmc"])
	}
	refused := strings.Join(in.Refused, "\n")
	for _, want := range []string{`node c (u3): driver "idrac" is not supported`, `node d (u4): properties.root_device.size "<= 10"`} {
		if !strings.Contains(refused, want) {
			t.Errorf("refused lacks %q:\n%s", want, refused)
		}
	}
	if len(in.Refused) != 2 {
		t.Errorf("refused %d, want 2:\n%s", len(in.Refused), refused)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0], `node e (u5): provision state "clean failed"`) {
		t.Errorf("skipped: %q", skipped)
	}
	notes := strings.Join(in.Notes, "\n")
	for _, want := range []string{`"zzz" matches no imported node`, "is not an http(s) URL (a Glance image?)", "enroll: Ironic never verified"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if why := in.MissingWhy([]string{"d-bmc"}); !strings.Contains(why, "--credentials-file") || !strings.Contains(why, "credentials set d-bmc") {
		t.Errorf("missing credentials: %s", why)
	}
}

func TestIronicCredsFile(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"n1: {username: a, pasword: b}\n", `entry "n1": field "pasword" is not username or password`},
		{"n1: {username: a}\n", `entry "n1": field password is required`},
		{"- a\n", "must be an object"},
		{"n1: {password: [1]}\n", `entry "n1":`},
	} {
		if _, err := ParseIronicCreds([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
	m, err := ParseIronicCreds([]byte(`{"https://10.0.0.1": {"password": "p"}}`))
	if err != nil || m["https://10.0.0.1"].Password != "p" {
		t.Errorf("JSON: %+v %v", m, err)
	}
}

func TestIronicRackFrom(t *testing.T) {
	n := ironicNode{Properties: map[string]any{"rack": "R_1"}, Extra: map[string]any{"rack": "r2", "n": 3.0}}
	for _, c := range []struct {
		o          IronicOptions
		want, errs string
	}{
		{IronicOptions{RackFrom: "extra.rack"}, "r2", ""},
		{IronicOptions{RackFrom: "properties.rack"}, "", "rack from properties.rack"},
		{IronicOptions{RackFrom: "extra.none", Rack: "r9"}, "r9", ""},
		{IronicOptions{RackFrom: "extra.none"}, "", "extra.none is not set"},
		{IronicOptions{RackFrom: "extra.n"}, "", "extra.n is not a string"},
	} {
		got, err := ironicRack(n, c.o)
		if got != c.want || (c.errs == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.errs)) {
			t.Errorf("%+v: %q %v, want %q %q", c.o, got, err, c.want, c.errs)
		}
	}
}

// TestIronicReadOnly: the import's transport sends GETs and refuses any
// other method before it leaves the process.
func TestIronicReadOnly(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = append(got, r.Method) }))
	defer srv.Close()
	c := &http.Client{Transport: &readOnlyTransport{next: http.DefaultTransport}}
	if resp, err := c.Get(srv.URL); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	for _, m := range []string{http.MethodPatch, http.MethodPost, http.MethodPut, http.MethodDelete} {
		req, _ := http.NewRequest(m, srv.URL, nil)
		if resp, err := c.Do(req); err == nil || !strings.Contains(err.Error(), "import ironic only reads: refusing "+m) {
			if resp != nil {
				resp.Body.Close()
			}
			t.Errorf("%s: %v", m, err)
		}
	}
	if len(got) != 1 || got[0] != http.MethodGet {
		t.Errorf("the server saw %q, want one GET", got)
	}
}

// A checksum file's URL in instance_info is carried over as it is, as
// image_checksum or as image_os_hash_value with its algorithm.
func TestIronicChecksumURL(t *testing.T) {
	const cu = "http://10.0.0.9/os.qcow2.sha256sum"
	nodes := []ironicNode{
		{UUID: "u1", Name: "a", Driver: "ipmi", ProvisionState: "active", DriverInfo: map[string]any{"ipmi_address": "10.0.0.1"},
			InstanceInfo: map[string]any{"image_source": "http://10.0.0.9/os.qcow2", "image_checksum": cu}},
		{UUID: "u2", Name: "b", Driver: "ipmi", ProvisionState: "active", DriverInfo: map[string]any{"ipmi_address": "10.0.0.2"},
			InstanceInfo: map[string]any{"image_source": "http://10.0.0.9/os.qcow2", "image_os_hash_algo": "sha256", "image_os_hash_value": cu}},
	}
	creds := ironicCreds{"a": {Username: "u", Password: "p"}, "b": {Username: "u", Password: "p"}}
	in, _ := ConvertIronic(nodes, nil, IronicOptions{Rack: "r1", Creds: creds})
	if len(in.Refused) > 0 || len(in.Hosts) != 2 {
		t.Fatalf("refused %q", in.Refused)
	}
	for _, h := range in.Hosts {
		if im := h.Host.Image; im == nil || im.Checksum != cu {
			t.Errorf("%s: image %+v, want checksum %s", h.Host.Name, im, cu)
		}
	}
	if b := in.Hosts[1].Host.Image; b.ChecksumType != "sha256" {
		t.Errorf("b: checksumType %q", b.ChecksumType)
	}
}
