package importer

import (
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// A BMO address scheme says how the host boots; host export writes it
// back (pxe in an annotation), so apply(export(h)) keeps bootMethod.
func TestBootMethodFromScheme(t *testing.T) {
	for addr, want := range map[string]string{
		"redfish-uefihttp://h/redfish/v1/Systems/1":      wire.BootMethodUEFIHTTP,
		"redfish-uefihttp+http://h/redfish/v1/Systems/1": wire.BootMethodUEFIHTTP,
		"redfish-virtualmedia://h/x":                     wire.BootMethodVirtualMedia,
		"idrac-virtualmedia+https://h/x":                 wire.BootMethodVirtualMedia,
		"ilo5-virtualmedia://h/x":                        wire.BootMethodVirtualMedia,
		"redfish://h/x":                                  "",
		"idrac-redfish://h/x":                            "",
		"ipmi://h:623":                                   "",
		"10.0.0.1":                                       "",
	} {
		in, err := convertDoc("apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata: {name: h1}\nspec: {bmc: {address: \"" + addr + "\"}}\n")
		if err != nil || len(in.Hosts) != 1 {
			t.Fatalf("%s: %v %+v", addr, err, in)
		}
		if got := in.Hosts[0].Host.BootMethod; got != want {
			t.Errorf("%s: bootMethod %q; want %q", addr, got, want)
		}
	}
	for _, c := range []struct{ addr, method, exported string }{
		{"redfish://h/redfish/v1/Systems/1", wire.BootMethodUEFIHTTP, "redfish-uefihttp://h/redfish/v1/Systems/1"},
		{"redfish+http://h/x", wire.BootMethodVirtualMedia, "redfish-virtualmedia+http://h/x"},
		{"redfish://h/x", wire.BootMethodPXE, "redfish://h/x"},
		{"redfish://h/x", "", "redfish://h/x"},
		{"ipmi://h:623", wire.BootMethodPXE, "ipmi://h:623"},
	} {
		h := wire.Host{Name: "h1", Rack: "r1", BMC: wire.BMC{Address: c.addr}, BootMethod: c.method}
		d, _ := ExportBMH(h, "ns")
		if d.Spec.BMC.Address != c.exported {
			t.Errorf("export %s %s: address %q; want %q", c.addr, c.method, d.Spec.BMC.Address, c.exported)
		}
		doc := "apiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata: {name: h1, annotations: {"
		for k, v := range d.Metadata.Annotations {
			doc += "\"" + k + "\": \"" + v + "\", "
		}
		doc += "}}\nspec: {bmc: {address: \"" + d.Spec.BMC.Address + "\"}}\n"
		in, err := convertDoc(doc)
		if err != nil || len(in.Hosts) != 1 {
			t.Fatalf("apply export %s: %v %+v", c.exported, err, in)
		}
		if got := in.Hosts[0].Host; got.BootMethod != c.method || got.BMC.Address != c.addr {
			t.Errorf("round trip of %s %q: %s %q", c.addr, c.method, got.BMC.Address, got.BootMethod)
		}
	}
	if _, err := bootMethodOf("redfish://h", map[string]string{AnnBootMethod: "ipxe"}); err == nil {
		t.Error("annotation boot-method ipxe accepted")
	}
}

func convertDoc(doc string) (*Input, error) {
	objs, err := SplitObjects([]byte(doc))
	if err != nil {
		return nil, err
	}
	return ConvertBMH(objs, BMHOptions{Rack: "r1"})
}

// An Ironic node's boot_interface names its boot method.
func TestIronicBootInterface(t *testing.T) {
	nodes := []ironicNode{
		{UUID: "u1", Name: "a", Driver: "redfish", ProvisionState: "available", BootInterface: "redfish-virtual-media",
			DriverInfo: map[string]any{"redfish_address": "https://10.0.0.1"}},
		{UUID: "u2", Name: "b", Driver: "redfish", ProvisionState: "available", BootInterface: "ipxe",
			DriverInfo: map[string]any{"redfish_address": "https://10.0.0.2"}},
		{UUID: "u3", Name: "c", Driver: "redfish", ProvisionState: "available", BootInterface: "redfish-https",
			DriverInfo: map[string]any{"redfish_address": "https://10.0.0.3"}},
		{UUID: "u4", Name: "d", Driver: "redfish", ProvisionState: "available",
			DriverInfo: map[string]any{"redfish_address": "https://10.0.0.4"}},
	}
	in, _ := ConvertIronic(nodes, nil, IronicOptions{Rack: "r1", Creds: ironicCreds{}})
	want := map[string]string{"a": wire.BootMethodVirtualMedia, "b": wire.BootMethodPXE, "c": wire.BootMethodUEFIHTTP, "d": ""}
	for _, h := range in.Hosts {
		if h.Host.BootMethod != want[h.Host.Name] {
			t.Errorf("%s: bootMethod %q; want %q", h.Host.Name, h.Host.BootMethod, want[h.Host.Name])
		}
		delete(want, h.Host.Name)
	}
	if len(want) > 0 {
		t.Errorf("not imported: %v", want)
	}
}
