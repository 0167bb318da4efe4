package ctl

import (
	"errors"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// Every value host list prints in STATE, STATUS, ERROR and INTENTS is a
// filter; a value of another column names the flag that filters it.
func TestHostListFilters(t *testing.T) {
	hosts := []wire.Host{
		{Name: "new"},
		{Name: "gone", DeletionRequested: true},
		{Name: "ok", Status: &wire.HostStatus{ProvisioningState: wire.StateProvisioned, OperationalStatus: wire.OpOK}},
		{Name: "bad", Status: &wire.HostStatus{ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpError,
			ErrorType: wire.ErrPowerManagement, ErrorMessage: "power-off: timeout", ErrorCount: 1}},
		{Name: "asked", Intents: &wire.Intents{Detach: &wire.Intent{}}},
	}
	for _, tc := range []struct {
		f    listFilter
		want string
	}{
		{listFilter{state: "pending"}, "new,asked"},
		{listFilter{state: "deleting"}, "gone"},
		{listFilter{status: "error"}, "bad"},
		{listFilter{errType: "any"}, "bad"},
		{listFilter{errType: wire.ErrPowerManagement}, "bad"},
		{listFilter{errType: wire.ErrRegistration}, ""},
		{listFilter{pending: true}, "asked"},
		{listFilter{state: "pending", pending: true}, "asked"},
	} {
		if err := tc.f.check(); err != nil {
			t.Errorf("%+v refused: %v", tc.f, err)
		}
		var hf client.HostFilter
		tc.f.apply(&hf)
		if hf.State != "" {
			t.Errorf("%+v asks the coordinator for state %q, which drops hosts the column shows as %s", tc.f, hf.State, tc.f.state)
		}
		var got []string
		for _, h := range tc.f.keep(append([]wire.Host(nil), hosts...)) {
			got = append(got, h.Name)
		}
		if g := strings.Join(got, ","); g != tc.want {
			t.Errorf("%+v kept %q; want %q", tc.f, g, tc.want)
		}
	}
	var hf client.HostFilter
	(&listFilter{state: wire.StateAvailable}).apply(&hf)
	if hf.State != wire.StateAvailable {
		t.Errorf("a provisioning state is not sent to the coordinator: %+v", hf)
	}
	for _, tc := range []struct {
		f    listFilter
		want string
	}{
		{listFilter{state: "error"}, "--status error"},
		{listFilter{status: "available"}, "--state available"},
		{listFilter{state: "sleeping"}, "use one of"},
		{listFilter{errType: "oops"}, "use one of"},
	} {
		err := tc.f.check()
		var ue *UsageError
		if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v; want a usage error saying %q", tc.f, err, tc.want)
		}
	}
}

// The error cell and line name the operation that failed.
func TestHostErrorNamesOperation(t *testing.T) {
	h := &wire.Host{Name: "h", Status: &wire.HostStatus{ProvisioningState: wire.StateAvailable, OperationalStatus: wire.OpError,
		ErrorType: wire.ErrRegistration, ErrorMessage: "power-off: redfish 10.0.0.1: 401 Unauthorized", ErrorCount: 2}}
	if got := hostError(h); got != "registration error (power-off) x2" {
		t.Errorf("ERROR cell %q", got)
	}
	var b strings.Builder
	hostDetail(&b, h)
	if !strings.Contains(b.String(), "registration error, power-off failed (count 2)") {
		t.Errorf("host get does not name the operation:\n%s", b.String())
	}
	h.Status.ErrorMessage = "ipmi 127.0.0.1:9623: no answer"
	if got := hostError(h); got != "registration error x2" {
		t.Errorf("ERROR cell without an operation %q", got)
	}
}
