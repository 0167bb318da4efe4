package api

import (
	"errors"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestUnknownNestedFieldNamesItsPath: encoding/json names only the key of
// an unknown field; the 400 names where it stands in the body.
func TestUnknownNestedFieldNamesItsPath(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"name":"h1","userData":{"name":"ud","key":"x"}}`, "userData.key"},
		{`{"name":"h1","bmc":{"adress":"redfish://x"}}`, "bmc.adress"},
		{`{"name":"h1","rootDeviceHints":{"deviceName":"/dev/sda","size":10}}`, "rootDeviceHints.size"},
		{`{"name":"h1","colour":"red"}`, "colour"},
		// A key encoding/json matches case-insensitively is known.
		{`{"NAME":"h1","BMC":{"Address":"x","bogus":1}}`, "BMC.bogus"},
	} {
		err := decodeJSON([]byte(c.body), &wire.Host{}, false)
		var ae *apiError
		if !errors.As(err, &ae) || ae.Detail.Field != c.want || ae.Status != 400 {
			t.Errorf("%s: %v (field %q); want a 400 naming %q", c.body, err, fieldOf(ae), c.want)
		}
	}
}

func fieldOf(e *apiError) string {
	if e == nil {
		return ""
	}
	return e.Detail.Field
}
