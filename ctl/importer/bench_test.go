package importer

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkConvertBMH1000: converting 1,000 BareMetalHosts with their
// Secrets (every check, the same-machine one included), no I/O:
// go test ./ctl/importer -run '^$' -bench ConvertBMH -benchtime 20x
func BenchmarkConvertBMH1000(b *testing.B) {
	var sb strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&sb, "---\napiVersion: v1\nkind: Secret\nmetadata: {name: n%d-bmc, namespace: m}\nstringData: {username: admin, password: pw}\n", i)
		fmt.Fprintf(&sb, "---\napiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata: {name: n%d, namespace: m}\n"+
			"spec:\n  online: true\n  bmc: {address: \"redfish-virtualmedia://10.1.%d.%d/redfish/v1/Systems/1\", credentialsName: n%d-bmc}\n"+
			"  image: {url: \"http://i/os.qcow2\", checksum: \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}\n", i, i/250, i%250, i)
	}
	objs, err := SplitObjects([]byte(sb.String()))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		in, err := ConvertBMH(objs, BMHOptions{Rack: "r1"})
		if err != nil || len(in.Hosts) != 1000 {
			b.Fatalf("%v: %d hosts, refused %q", err, len(in.Hosts), in.Refused)
		}
	}
}
