package bmcsim

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkGet is the per-request cost of the engine (copy, placeholder
// substitution, overlay, JSON encoding) without the network: a system, a
// virtual media device and a static document, and the two expanded reads
// a registration makes (the system's inventory, the chassis's health).
// go test -run - -bench Get -benchmem ./testkit/bmcsim/
func BenchmarkGet(b *testing.B) {
	sim, err := Start(Config{Hosts: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer sim.Close()
	for _, p := range []string{"/redfish/v1/Systems/1", "/redfish/v1/Managers/1/VirtualMedia/CD1", "/redfish/v1/Systems/1/Processors/CPU1",
		"/redfish/v1/Systems/1?$expand=.($levels=3)", "/redfish/v1/Chassis/1?$expand=.($levels=3)"} {
		b.Run(strings.ReplaceAll(p[len("/redfish/v1/"):], "$", ""), func(b *testing.B) {
			r := httptest.NewRequest("GET", p, nil)
			r.SetBasicAuth("admin", "password")
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.Addr(&net.TCPAddr{Port: sim.Port(0)})))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				w := httptest.NewRecorder()
				sim.ServeHTTP(w, r)
				if w.Code != 200 {
					b.Fatal(w.Code)
				}
			}
		})
	}
}
