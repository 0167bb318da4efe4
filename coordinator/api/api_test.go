package api

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

func TestSingleNodeAPI(t *testing.T) {
	testenv.SkipShort(t) // waits out a lease TTL: seconds, not the fast layer
	n, admin := startLeader(t, "127.0.0.1")
	u := n.url
	op := newToken(t, u, admin, wire.RoleOperator, "")
	viewer := newToken(t, u, admin, wire.RoleViewer, "")
	agent := newToken(t, u, admin, wire.RoleAgent, "r1")
	agent2 := newToken(t, u, admin, wire.RoleAgent, "r2")

	t.Run("auth", func(t *testing.T) {
		must(t, 200, "GET", u+"/v1/health", "", nil, nil)
		if d := errBody(t, must(t, 401, "GET", u+"/v1/hosts", "", nil, nil)); d.Code != wire.CodeUnauthorized {
			t.Fatal(d)
		}
		must(t, 401, "GET", u+"/v1/hosts", "nope", nil, nil)
		if d := errBody(t, must(t, 403, "PUT", u+"/v1/hosts/h1", viewer, testHost("h1", "r1"), nil)); d.Code != wire.CodeForbidden {
			t.Fatal(d)
		}
		must(t, 403, "POST", u+"/v1/tokens", op, wire.TokenRequest{Role: "viewer"}, nil)
		must(t, 403, "PUT", u+"/v1/hosts/h1", agent, testHost("h1", "r1"), nil)
		must(t, 403, "POST", u+"/v1/racks/r2/lease", agent, wire.LeaseRequest{Holder: "a"}, nil)
		must(t, 403, "GET", u+"/v1/watch?rack=r2", agent, nil, nil)
	})

	var h wire.Host
	must(t, 201, "PUT", u+"/v1/hosts/h1", op, testHost("h1", "r1"), &h)
	must(t, 200, "PUT", u+"/v1/hosts/h1", op, testHost("h1", "r1"), nil)
	must(t, 201, "PUT", u+"/v1/hosts/h2", op, testHost("h2", "r2"), nil)
	must(t, 201, "PUT", u+"/v1/credentials/c1", admin, wire.Credentials{Username: "admin", Password: "password"}, nil)

	t.Run("validation", func(t *testing.T) {
		cases := []struct {
			method, path, body, field string
			code                      int
		}{
			{"PUT", "/v1/hosts/h1", `{"rack":"r1","extra":1}`, "extra", 400},
			{"PUT", "/v1/hosts/H_1", `{"rack":"r1"}`, "name", 400},
			{"PUT", "/v1/hosts/h1", `{"rack":"r1","bootMACAddress":"zz"}`, "bootMACAddress", 400},
			{"PUT", "/v1/hosts/h1", `{"rack":"r1","bmc":{"address":"ftp://x"}}`, "bmc.address", 400},
			{"PUT", "/v1/hosts/h1", `{"rack":"r1","online":"yes"}`, "online", 400},
			{"PUT", "/v1/hosts/h1", `{"rack":"r2"}`, "rack", 409},
			{"PUT", "/v1/hosts/h1", `{"rack":`, "", 400},
			{"PUT", "/v1/hosts/h1", `{"rack":"r1"} {}`, "", 400},
			{"PUT", "/v1/hosts/" + strings.Repeat("a", 64), `{"rack":"r1"}`, "name", 400},
			{"PUT", "/v1/hosts/h1", `{"rack":"r1","image":{"url":"http://i/x","format":"qcow3"}}`, "image.format", 400},
			{"PUT", "/v1/hosts/h1", `{"rack":"r1","image":{"url":"http://i/x","checksum":"ab","checksumType":"crc32"}}`, "image.checksumType", 400},
			{"PUT", "/v1/hosts/h1", `{"rack":"r1","image":{"url":"http://i/x","checksum":"xyz"}}`, "image.checksum", 400},
			{"PUT", "/v1/hosts/h1", `{"rack":"r1","bootMode":"uefi"}`, "bootMode", 400},
			{"PUT", "/v1/hosts/h1", `{"rack":"r1","automatedCleaningMode":"always"}`, "automatedCleaningMode", 400},
			{"PUT", "/v1/hosts/h1", `{"rack":"r1","rootDeviceHints":{"deviceName":"sda"}}`, "rootDeviceHints.deviceName", 400},
			{"PUT", "/v1/hosts/h1", `{"rack":"r1","rootDeviceHints":{"hctl":"0:0:0"}}`, "rootDeviceHints.hctl", 400},
			{"PUT", "/v1/hosts/h1", `{"rack":"r1","rootDeviceHints":{"minSizeGigabytes":-1}}`, "rootDeviceHints.minSizeGigabytes", 400},
			{"PUT", "/v1/hosts/h1", `{"rack":"r1","rootDeviceHints":{"rotational":"no"}}`, "rootDeviceHints.rotational", 400},
			{"PUT", "/v1/hosts/h1", `{"rack":"r1","rootDeviceHints":{"disk":"/dev/sda"}}`, "rootDeviceHints.disk", 400},
			{"POST", "/v1/hosts/h1/intents/drain", `{"mode":"sideways"}`, "mode", 400},
			{"POST", "/v1/hosts/h1/intents/explode", `{}`, "kind", 400},
			{"DELETE", "/v1/hosts/h1/intents/resume", ``, "kind", 400},
		}
		for _, c := range cases {
			raw := must(t, c.code, c.method, u+c.path, op, c.body, nil)
			if d := errBody(t, raw); d.Field != c.field {
				t.Errorf("%s %s %s: field %q, want %q (%s)", c.method, c.path, c.body, d.Field, c.field, raw)
			}
		}
		big := `{"rack":"r1","consumer":"` + strings.Repeat("x", 1<<20) + `"}`
		if d := errBody(t, must(t, 413, "PUT", u+"/v1/hosts/h1", op, big, nil)); d.Code != wire.CodeTooLarge {
			t.Fatal(d)
		}
		must(t, 400, "POST", u+"/v1/racks/r1/lease", agent, `{"holder":"a","ttl":"1h"}`, nil)
		must(t, 400, "POST", u+"/v1/tokens", admin, `{"role":"agent"}`, nil)
		must(t, 400, "POST", u+"/v1/tokens", admin, `{"role":"root"}`, nil)
	})

	t.Run("credentials", func(t *testing.T) {
		var cr wire.Credentials
		raw := must(t, 200, "GET", u+"/v1/credentials/c1", viewer, nil, &cr)
		if cr.Username != "admin" || strings.Contains(string(raw), "password\":\"password") {
			t.Fatalf("viewer sees %s", raw)
		}
		must(t, 403, "GET", u+"/v1/credentials/c1?reveal=true", viewer, nil, nil)
		must(t, 200, "GET", u+"/v1/credentials/c1?reveal=true", admin, nil, &cr)
		if cr.Password != "password" {
			t.Fatalf("admin did not get the password: %+v", cr)
		}
		cr = wire.Credentials{}
		must(t, 200, "GET", u+"/v1/credentials/c1?reveal=true", agent, nil, &cr)
		if cr.Password != "password" {
			t.Fatalf("agent of r1 did not get the password: %+v", cr)
		}
		// r2's agent also has a host naming c1 (h2), so it may; a rack with none may not.
		agent3 := newToken(t, u, admin, wire.RoleAgent, "r3")
		must(t, 403, "GET", u+"/v1/credentials/c1?reveal=true", agent3, nil, nil)
		must(t, 404, "GET", u+"/v1/credentials/nope", viewer, nil, nil)
	})

	t.Run("lease, status, watch", func(t *testing.T) {
		var l wire.Lease
		must(t, 200, "POST", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "a1", TTL: wire.Duration(2 * time.Second)}, &l)
		raw := must(t, 409, "POST", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "a2", TTL: wire.Duration(2 * time.Second)}, nil)
		if !strings.Contains(errBody(t, raw).Message, "a1") {
			t.Fatal(string(raw))
		}
		var in wire.Intent
		must(t, 200, "POST", u+"/v1/hosts/h1/intents/detach", op, wire.IntentRequest{Reason: "move"}, &in)
		// A watch from index 0 gets everything, including the intent and the lease.
		var w wire.WatchResponse
		must(t, 200, "GET", u+"/v1/watch?rack=r1&index=0", agent, nil, &w)
		if len(w.Hosts) != 1 || w.Hosts[0].Intents == nil || w.Lease == nil || w.Lease.Epoch != l.Epoch {
			t.Fatalf("watch 0: %+v", w)
		}
		// A blocked watch wakes on a status report.
		done := make(chan wire.WatchResponse, 1)
		go func() {
			var w2 wire.WatchResponse
			call(t, "GET", u+"/v1/watch?rack=r1&index="+itoa64(w.Index), agent, nil, &w2)
			done <- w2
		}()
		// The report goes out once the watch is parked in the FSM: it must
		// wake it (an answer before the report would lack the status).
		testenv.WaitBlocked(t, 30*time.Second, "fsm.(*FSM).WaitChange")
		rep := wire.StatusReport{Epoch: l.Epoch, Status: wire.HostStatus{ProvisioningState: wire.StateRegistering, OperationalStatus: wire.OpOK},
			Acks: []wire.IntentAck{{Kind: "detach", CreatedIndex: in.CreatedIndex}}}
		must(t, 200, "PUT", u+"/v1/hosts/h1/status", agent, rep, nil)
		select {
		case w2 := <-done:
			if len(w2.Hosts) != 1 || w2.Hosts[0].Status == nil || !w2.Hosts[0].Intents.Detach.Acknowledged || w2.Index <= w.Index {
				t.Fatalf("woken watch: %+v", w2)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("watch not woken by a status report")
		}
		// Stale epoch → 409 stale_epoch; another rack's agent → 403.
		rep.Epoch = l.Epoch - 1
		if d := errBody(t, must(t, 409, "PUT", u+"/v1/hosts/h1/status", agent, rep, nil)); d.Code != wire.CodeStaleEpoch {
			t.Fatal(d)
		}
		rep.Epoch = l.Epoch
		must(t, 403, "PUT", u+"/v1/hosts/h1/status", agent2, rep, nil)
		must(t, 403, "PUT", u+"/v1/hosts/h1/status", op, rep, nil)
		// Without renewals the leader expires the lease after TTL + margin.
		testenv.Eventually(t, 30*time.Second, "the lease expired", func() error {
			var rec wire.List[wire.LeaseRecord]
			must(t, 200, "GET", u+"/v1/racks/r1/leases", viewer, nil, &rec)
			if len(rec.Items) != 1 || rec.Items[0].End != "expired" {
				return fmt.Errorf("lease history %+v", rec.Items)
			}
			return nil
		})
		must(t, 409, "PUT", u+"/v1/hosts/h1/status", agent, rep, nil)
		// The leader counts an expiry once its apply returns, which can be
		// just after the history above shows it: poll, do not read once.
		testenv.Eventually(t, 30*time.Second, "/metrics counts the expiry of r1's lease", func() error {
			const want = "\n" + `rackfence_lease_expirations_total{rack="r1"} 1` + "\n"
			if m := string(must(t, 200, "GET", u+"/metrics", "", nil, nil)); !strings.Contains(m, want) {
				return fmt.Errorf("no %q in /metrics", strings.TrimSpace(want))
			}
			return nil
		})
		must(t, 200, "POST", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "a2", TTL: wire.Duration(10 * time.Second)}, &l)
		must(t, 200, "PUT", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "a2", Epoch: l.Epoch}, nil)
		must(t, 200, "DELETE", u+"/v1/racks/r1/lease", agent, wire.LeaseRequest{Holder: "a2", Epoch: l.Epoch}, nil)
		must(t, 404, "GET", u+"/v1/racks/r1/lease", viewer, nil, nil)
	})

	t.Run("delete", func(t *testing.T) {
		must(t, 200, "DELETE", u+"/v1/hosts/h2", op, nil, nil) // never reported: gone now
		must(t, 202, "DELETE", u+"/v1/hosts/h1", op, nil, nil) // has status: agent deletes
		var got wire.Host
		must(t, 200, "GET", u+"/v1/hosts/h1", viewer, nil, &got)
		if !got.DeletionRequested {
			t.Fatal("deletion not requested")
		}
		var racks wire.List[wire.Rack]
		must(t, 200, "GET", u+"/v1/racks", viewer, nil, &racks)
		if len(racks.Items) != 1 || racks.Items[0].Name != "r1" || racks.Items[0].Hosts != 1 {
			t.Fatalf("racks: %+v", racks)
		}
	})
	must(t, 200, "GET", u+"/metrics", "", nil, nil)
}

func itoa64(n uint64) string {
	s := ""
	for {
		s = string(rune('0'+n%10)) + s
		n /= 10
		if n == 0 {
			return s
		}
	}
}

var _ = http.StatusOK
