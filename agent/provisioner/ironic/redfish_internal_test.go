package ironic

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/rackfence/rackfence/agent/guard"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/shared/fence"
	"github.com/rackfence/rackfence/shared/wire"
)

// stubIronic answers GET /v1 (1.82) and GET /v1/drivers/redfish with the
// given enabled interfaces (404 when driver is empty).
func stubIronic(t *testing.T, driver string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1", "/v1/":
			w.Write([]byte(`{"id":"v1","version":{"id":"v1","status":"CURRENT","min_version":"1.1","version":"1.82"}}`))
		case "/v1/drivers/redfish":
			if driver == "" {
				w.WriteHeader(http.StatusNotFound)
				w.Write([]byte(`{"error_message":"{\"faultstring\": \"Could not find the following driver(s) or hardware type(s): redfish.\"}"}`))
				return
			}
			w.Write([]byte(driver))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func testGuard() *guard.Guard {
	h := fence.NewHolder(nil)
	h.Set(fence.Lease{Rack: "r1", Epoch: 1, TTL: time.Hour, Deadline: time.Now().Add(time.Hour)})
	return guard.NewGuard(h, nil)
}

// The interfaces chosen for redfish nodes follow what Ironic enables for
// the redfish hardware type unless the Config decides.
func TestRedfishChoice(t *testing.T) {
	all := `{"name":"redfish","enabled_inspect_interfaces":["no-inspect","redfish"],
		"enabled_boot_interfaces":["pxe","redfish-virtual-media"],"enabled_deploy_interfaces":["direct","ramdisk"]}`
	bare := `{"name":"redfish","enabled_inspect_interfaces":["no-inspect"],
		"enabled_boot_interfaces":["pxe"],"enabled_deploy_interfaces":["direct","ramdisk"]}`
	for _, c := range []struct {
		name, driver string
		mod          func(*Config)
		want         redfishChoice
	}{
		{"Ironic enables all", all, nil, redfishChoice{inspect: "redfish", vmedia: true}},
		{"Ironic enables none", bare, nil, redfishChoice{}},
		{"no redfish hardware type", "", nil, redfishChoice{}},
		{"opt out", all, func(c *Config) { c.RedfishInspect = "no-inspect"; c.RedfishVirtualMedia = "off" },
			redfishChoice{inspect: "no-inspect"}},
		{"forced on", bare, func(c *Config) { c.RedfishVirtualMedia = "on" }, redfishChoice{vmedia: true}},
		{"Interfaces win", all, func(c *Config) { c.Interfaces = map[string]string{"inspect": "no-inspect", "boot": "pxe"} },
			redfishChoice{}},
		{"fake-hardware", all, func(c *Config) { c.Driver = "fake-hardware" }, redfishChoice{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{URL: stubIronic(t, c.driver), Guard: testGuard()}
			if c.mod != nil {
				c.mod(&cfg)
			}
			p, err := New(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if p.redfish != c.want {
				t.Fatalf("redfish choice %+v, want %+v", p.redfish, c.want)
			}
		})
	}
	if _, err := New(context.Background(), Config{URL: stubIronic(t, all), Guard: testGuard(), RedfishVirtualMedia: "yes"}); !errors.Is(err, ErrConfig) {
		t.Fatalf("RedfishVirtualMedia yes: %v, want ErrConfig", err)
	}
}

// instance_info: boot_iso (never with image_source) for a virtual media
// node, image_source otherwise.
func TestInstanceInfoVirtualMedia(t *testing.T) {
	p := &Provisioner{cfg: Config{RedfishISODownload: "http"}}
	h := provisioner.Host{Image: &wire.Image{URL: "http://images/x.iso", Checksum: "sha256:ab"}}
	vm := &nodes.Node{BootInterface: "redfish-virtual-media", DeployInterface: "ramdisk"}
	ii := p.instanceInfo(h, vm)[0].(nodes.UpdateOperation).Value.(map[string]any)
	if ii["boot_iso"] != "http://images/x.iso" || ii["ramdisk_image_download_source"] != "http" || ii["image_source"] != nil {
		t.Fatalf("virtual media instance_info %v", ii)
	}
	ii = p.instanceInfo(h, &nodes.Node{BootInterface: "pxe", DeployInterface: "direct"})[0].(nodes.UpdateOperation).Value.(map[string]any)
	if ii["image_source"] != "http://images/x.iso" || ii["boot_iso"] != nil || ii["image_os_hash_value"] != "ab" {
		t.Fatalf("direct instance_info %v", ii)
	}
}

// A checksum file's URL reaches Ironic as it is: image_checksum for md5
// or an undeclared type (Ironic tells the digest by its length),
// image_os_hash_algo/image_os_hash_value for sha256 and sha512.
func TestInstanceInfoChecksumURL(t *testing.T) {
	p := &Provisioner{}
	direct := &nodes.Node{BootInterface: "pxe", DeployInterface: "direct"}
	const cu = "http://images/disk.qcow2.sha256sum"
	for _, c := range []struct {
		typ  string
		want map[string]any
	}{
		{"", map[string]any{"image_checksum": cu}},
		{"auto", map[string]any{"image_checksum": cu}},
		{"md5", map[string]any{"image_checksum": cu}},
		{"sha256", map[string]any{"image_os_hash_algo": "sha256", "image_os_hash_value": cu}},
		{"sha512", map[string]any{"image_os_hash_algo": "sha512", "image_os_hash_value": cu}},
	} {
		h := provisioner.Host{Image: &wire.Image{URL: "http://images/disk.qcow2", Checksum: cu, ChecksumType: c.typ}}
		ii := p.instanceInfo(h, direct)[0].(nodes.UpdateOperation).Value.(map[string]any)
		for _, k := range []string{"image_checksum", "image_os_hash_algo", "image_os_hash_value"} {
			if ii[k] != c.want[k] {
				t.Errorf("checksumType %q: instance_info[%s] = %v, want %v", c.typ, k, ii[k], c.want[k])
			}
		}
	}
}

func TestLastErrorVirtualMedia(t *testing.T) {
	for _, c := range []struct {
		state, lastError string
		want             bool
	}{
		{"deploy failed", "Deploy step deploy.deploy failed: No suitable virtual media device found.", true},
		{"error", "Failed to tear down: The attribute VirtualMedia is missing from the resource /redfish/v1/Managers/BMC", true},
		{"deploy failed", "Timeout reached while waiting for callback", false},
		{"active", "virtual media", false},
	} {
		if got := vmediaFailure(&nodes.Node{ProvisionState: c.state, LastError: c.lastError}); got != c.want {
			t.Errorf("vmediaFailure(%s, %q) = %v, want %v", c.state, c.lastError, got, c.want)
		}
	}
}
