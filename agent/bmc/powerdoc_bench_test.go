package bmc

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stmcginnis/gofish/redfish"

	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// BenchmarkPowerDocDecode: the decode of a simulated BMC's
// ComputerSystem before a power change, as gofish's whole ComputerSystem
// and as the power part alone (rfPowerDoc), for every bmcsim profile.
//
//	go test -run '^$' -bench PowerDocDecode -benchmem ./agent/bmc/
func BenchmarkPowerDocDecode(b *testing.B) {
	for _, p := range bmcsim.Profiles() {
		sim := startSim(b, bmcsim.Config{Hosts: 1, Profile: p})
		u := "http://" + strings.TrimPrefix(sim.Address(0), "redfish+http://")
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		req.SetBasicAuth(bmcsim.DefaultUsername, bmcsim.DefaultPassword)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("%s: %v %d", u, err, resp.StatusCode)
		}
		b.Run(p+"/ComputerSystem", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				var s redfish.ComputerSystem
				if err := json.Unmarshal(body, &s); err != nil || s.PowerState == "" {
					b.Fatal(err)
				}
			}
		})
		b.Run(p+"/rfPowerDoc", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				var d rfPowerDoc
				if err := json.Unmarshal(body, &d); err != nil || d.PowerState == "" || d.Actions.Reset.Target == "" {
					b.Fatal(err)
				}
			}
		})
	}
}
