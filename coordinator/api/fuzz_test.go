package api

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// The request decoders must never panic, and every refusal must be an
// answer the client can act on (an *apiError or a *wire.FieldError).

func checkRefusal(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var ae *apiError
	var fe *wire.FieldError
	if !errors.As(err, &ae) && !errors.As(err, &fe) {
		t.Fatalf("refusal of type %T: %v", err, err)
	}
}

func FuzzDecodeHost(f *testing.F) {
	f.Add([]byte(`{"name":"h1","rack":"r1","bmc":{"address":"redfish://10.0.0.1/redfish/v1/Systems/1","credentials":"c"},"bootMACAddress":"52:54:00:00:01:07","online":true,"image":{"url":"http://i/x","checksum":"sha256:ab"}}`))
	f.Add([]byte(`{"name":"h1","rack":"r1","image":{"url":"http://i/x","checksum":"ab","checksumType":"md5","format":"qcow2"},"bootMode":"legacy","automatedCleaningMode":"disabled","rootDeviceHints":{"deviceName":"/dev/sda","hctl":"0:0:0:0","minSizeGigabytes":10,"rotational":true}}`))
	f.Add([]byte(`{"rack":"r1","status":{"provisioningState":"x"},"intents":{"detach":{}}}`))
	f.Add([]byte(`{"rack":"r1","x":1}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"rack":"r1","labels":{"role":"compute","example.com/zone":"","Bad Key":"x"}}`))
	f.Add([]byte(`{"rack":"r1","labels":{"role":"compute","zone":"a"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var h wire.Host
		err := decodeJSON(b, &h, false)
		checkRefusal(t, err)
		if err != nil {
			return
		}
		err = wire.ValidateHost(&h, "h1")
		checkRefusal(t, err)
		if err != nil {
			return
		}
		if h.Name != "h1" || wire.ValidateName("rack", h.Rack) != nil {
			t.Fatalf("accepted %+v", h)
		}
		// Accepted labels select themselves.
		if sel, err := wire.ParseSelector(wire.FormatLabels(h.Labels)); err != nil || !sel.Matches(h.Labels) {
			t.Fatalf("accepted labels %v do not select themselves: %v", h.Labels, err)
		}
		// What we accept, we can answer and take back unchanged.
		out, _ := json.Marshal(h)
		var h2 wire.Host
		if err := decodeJSON(out, &h2, false); err != nil {
			t.Fatalf("our own output is refused: %v (%s)", err, out)
		}
	})
}

func FuzzDecodeStatusReport(f *testing.F) {
	f.Add([]byte(`{"epoch":3,"status":{"provisioningState":"provisioned","operationalStatus":"ok","hardwareDetails":{"cpus":[{"cores":4}]}},"acks":[{"kind":"detach","createdIndex":2}],"events":[{"reason":"R","message":"m"}]}`))
	f.Add([]byte(`{"epoch":0}`))
	f.Add([]byte(`{"epoch":1,"acks":[{"kind":"nope","createdIndex":1}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r wire.StatusReport
		err := decodeJSON(b, &r, false)
		checkRefusal(t, err)
		if err != nil {
			return
		}
		checkRefusal(t, validateReport(&r))
	})
}

func FuzzDecodeLease(f *testing.F) {
	f.Add([]byte(`{"holder":"a","ttl":"10s"}`), true)
	f.Add([]byte(`{"holder":"a","ttl":10,"epoch":5}`), false)
	f.Add([]byte(`{"holder":"","ttl":"-1s"}`), true)
	f.Fuzz(func(t *testing.T, b []byte, acquire bool) {
		var r wire.LeaseRequest
		err := decodeJSON(b, &r, false)
		checkRefusal(t, err)
		if err != nil {
			return
		}
		err = validateLease(&r, acquire)
		checkRefusal(t, err)
		if err == nil && (r.TTL.D() != 0 && (r.TTL.D() < MinLeaseTTL || r.TTL.D() > MaxLeaseTTL)) {
			t.Fatalf("accepted ttl %s", r.TTL.D())
		}
	})
}

func FuzzDecodeIntent(f *testing.F) {
	f.Add([]byte(`{"mode":"removal","force":true,"wipe":true}`), "drain")
	f.Add([]byte(`{"reason":"x"}`), "detach")
	f.Add([]byte(``), "resume")
	f.Fuzz(func(t *testing.T, b []byte, kind string) {
		var r wire.IntentRequest
		err := decodeJSON(b, &r, true)
		checkRefusal(t, err)
		if err != nil {
			return
		}
		checkRefusal(t, wire.ValidateIntent(kind, &r))
	})
}

func FuzzParseUint(f *testing.F) {
	f.Add("0")
	f.Add("18446744073709551615")
	f.Add("18446744073709551616")
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseUint(s)
		if err == nil && itoa64(n) != trimZeros(s) {
			t.Fatalf("%q parsed as %d", s, n)
		}
	})
}

func trimZeros(s string) string {
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
}

func FuzzDecodeTokenRequest(f *testing.F) {
	f.Add([]byte(`{"role":"agent","rack":"r1","ttl":"720h","name":"agent-r1"}`))
	f.Add([]byte(`{"role":"viewer","ttl":"-1s"}`))
	f.Add([]byte(`{"role":"admin","ttl":"9999999h"}`))
	f.Add([]byte(`{"role":"viewer","ttl":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r wire.TokenRequest
		err := decodeJSON(b, &r, false)
		checkRefusal(t, err)
		if err != nil {
			return
		}
		ttl, err := validateTokenRequest(&r)
		checkRefusal(t, err)
		if err != nil {
			return
		}
		if ttl < 0 || ttl > MaxTokenTTL || (r.TTL != "" && ttl < time.Second) || !wire.ValidRole(r.Role) {
			t.Fatalf("accepted %+v with ttl %v", r, ttl)
		}
	})
}
