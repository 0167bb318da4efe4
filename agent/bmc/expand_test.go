package bmc

import (
	"strings"
	"testing"
)

// TestInventoryExpandRefusedOrIgnored: a service advertising "." expansion
// (several levels: the system expanded; one level: each collection
// expanded) that refuses the query (400, 404, 501) or ignores it (answers
// the bare document) still has its inventory read, link by link; after a
// refusal the Conn no longer sends $expand.
func TestInventoryExpandRefusedOrIgnored(t *testing.T) {
	for _, tc := range []struct{ status, levels int }{{0, 6}, {400, 6}, {501, 6}, {0, 1}, {400, 1}, {404, 1}, {501, 1}} {
		status := tc.status
		f := oneSystem(t, true, map[string]any{
			"Manufacturer": "FakeCo", "Processors": odata("/redfish/v1/Systems/1/Processors"),
		})
		f.docs["/redfish/v1"]["ProtocolFeaturesSupported"] = map[string]any{
			"ExpandQuery": map[string]any{"NoLinks": true, "Levels": true, "MaxLevels": tc.levels}}
		f.docs["/redfish/v1/Systems/1/Processors"] = coll("/redfish/v1/Systems/1/Processors/CPU1")
		f.docs["/redfish/v1/Systems/1/Processors/CPU1"] = map[string]any{"@odata.id": "/redfish/v1/Systems/1/Processors/CPU1",
			"Id": "CPU1", "ProcessorType": "CPU", "Model": "Fake 8C", "TotalCores": 8, "TotalThreads": 16}
		f.expand = status
		c, err := dialFake(t, f, "", "password")
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			hw, err := c.Inventory(testCtx(t))
			if err != nil {
				t.Fatalf("$expand (%d levels) answered %d: inventory %d: %v", tc.levels, status, i, err)
			}
			if len(hw.CPUs) != 1 || hw.CPUs[0].Cores != 8 {
				t.Fatalf("$expand (%d levels) answered %d: inventory %d CPUs %+v, want the one CPU read link by link", tc.levels, status, i, hw.CPUs)
			}
		}
		var sent []string
		for _, r := range f.requests() {
			if strings.Contains(r, "expand") {
				sent = append(sent, r)
			}
		}
		want := 2 // ignored: asked each time
		if status != 0 {
			want = 1 // refused: asked once
		}
		if len(sent) != want {
			t.Errorf("$expand (%d levels) answered %d: sent %d times over two inventories (%v), want %d", tc.levels, status, len(sent), sent, want)
		}
	}
}
