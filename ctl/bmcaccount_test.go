package ctl

import (
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// host bmc-account says whether the fence at the BMC is on, and why not.
func TestBMCAccountDetail(t *testing.T) {
	for _, tc := range []struct {
		a    wire.BMCAccount
		req  *wire.Intent
		want []string
	}{
		{wire.BMCAccount{Host: "h", Username: "rackfence", State: wire.BMCAccountConfirmed, Epoch: 7,
			RotatedAt: time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)},
			nil, []string{"Fence at the BMC", "on", "under epoch 7 at 2026-11-28T05:00:00Z", "never shown"}},
		{wire.BMCAccount{Host: "h", Username: "rackfence", State: wire.BMCAccountConfirmed, Epoch: 7},
			&wire.Intent{Actor: "ops", CreatedIndex: 42}, []string{"Rotation requested", "by ops (index 42), waiting"}},
		{wire.BMCAccount{Host: "h", State: wire.BMCAccountOff, Reason: "the BMC has no free account slot"},
			nil, []string{"off: the BMC has no free account slot"}},
		{wire.BMCAccount{Host: "h", Username: "rackfence", State: wire.BMCAccountPending, PendingEpoch: 9},
			nil, []string{"rotating (a new password recorded under epoch 9"}},
	} {
		var b strings.Builder
		bmcAccountDetail(&b, &tc.a, tc.req)
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: does not say %q:\n%s", tc.a.State, w, b.String())
			}
		}
	}
}
