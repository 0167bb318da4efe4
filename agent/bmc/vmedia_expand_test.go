package bmc

import (
	"strings"
	"testing"
)

// TestVirtualMediaExpandCheckedNotTrusted: the virtual media collection is
// read expanded where the service offers it (TestGetsPerRegistration: the
// device inline, no GET of its own), and the device is found the same when
// the service offers no expansion, ignores the query, refuses it (400,
// 501) or answers the collection without its members
// (read plainly, then member by member).
func TestVirtualMediaExpandCheckedNotTrusted(t *testing.T) {
	const vm, cd = "/redfish/v1/Managers/1/VirtualMedia", "/redfish/v1/Managers/1/VirtualMedia/CD1"
	for _, c := range []struct {
		name   string
		expand int
		empty  bool
	}{{name: "ignored"}, {name: "not offered"}, {name: "400", expand: 400}, {name: "501", expand: 501}, {name: "members left out", empty: true}} {
		t.Run(c.name, func(t *testing.T) {
			f := oneSystem(t, true, nil)
			if c.name != "not offered" {
				f.docs["/redfish/v1"]["ProtocolFeaturesSupported"] = map[string]any{
					"ExpandQuery": map[string]any{"NoLinks": true, "Levels": true, "MaxLevels": 3}}
			}
			f.docs["/redfish/v1/Managers/1"]["VirtualMedia"] = odata(vm)
			f.docs[vm] = coll(cd)
			f.docs[cd] = map[string]any{"@odata.id": cd, "@odata.type": "#VirtualMedia.v1_3_0.VirtualMedia", "Id": "CD1",
				"MediaTypes": []string{"CD", "DVD"}}
			f.expand, f.expandEmpty = c.expand, c.empty
			conn, err := dialFake(t, f, "", "password")
			if err != nil {
				t.Fatal(err)
			}
			bd, err := conn.Details(testCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			if bd.VirtualMedia != cd {
				t.Fatalf("virtual media %q, want %s (requests %v)", bd.VirtualMedia, cd, f.requests())
			}
			reqs := f.requests()
			expanded, plain, member := 0, 0, 0
			for _, r := range reqs {
				switch {
				case strings.HasPrefix(r, "GET "+vm+"?$expand=. "):
					expanded++
				case strings.HasPrefix(r, "GET "+vm+" "):
					plain++
				case strings.HasPrefix(r, "GET "+cd+" "):
					member++
				}
			}
			want := map[string][3]int{"ignored": {1, 0, 1}, "not offered": {0, 1, 1}, "400": {1, 1, 1}, "501": {1, 1, 1}, "members left out": {1, 1, 1}}[c.name]
			if got := [3]int{expanded, plain, member}; got != want {
				t.Errorf("GETs of the collection expanded, plainly, of the device: %v, want %v: %v", got, want, reqs)
			}
		})
	}
}
