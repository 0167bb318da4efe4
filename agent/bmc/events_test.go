package bmc

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/testkit/bmcsim"
)

// TestEventSubscriptionsEveryProfile: on every profile with an
// EventService, arming subscribes once (the secret in HttpHeaders),
// arming again replaces the owner's subscription
// and leaves another owner's, the subscription is found by its path,
// a test event is asked for, and disarming deletes only the owner's; a
// profile without one answers ErrUnsupported and disarming it is no error.
func TestEventSubscriptionsEveryProfile(t *testing.T) {
	ctx := testCtx(t)
	g, _ := leasedGuard(time.Minute, nil)
	for _, prof := range bmcsim.Profiles() {
		sim := startSim(t, bmcsim.Config{Hosts: 1, Profile: prof})
		c, err := Dial(ctx, Target{Address: sim.SystemAddresses(0)[0], Username: "admin", Password: "password"}, Options{Timeout: 20 * time.Second})
		if err != nil {
			t.Fatalf("%s: %v", prof, err)
		}
		sub := EventSubscribe{Destination: "https://127.0.0.1:1/events/h1", Owner: "rackfence r1 h1 ", Context: "rackfence r1 h1 epoch 1",
			Headers: map[string]string{"X-Rackfence-Event-Token": "s3cret"}}
		a, err := c.ArmEvents(ctx, g, "h1", sub)
		if sim.State(0).Events == nil {
			if !errors.Is(err, errclass.ErrUnsupported) {
				t.Errorf("%s (no EventService): arm %+v, %v", prof, a, err)
			}
			if n, err := c.DisarmEvents(ctx, g, "h1", sub.Owner); n != 0 || err != nil {
				t.Errorf("%s: disarm %d, %v", prof, n, err)
			}
			_ = c.Close(ctx)
			continue
		}
		if err != nil || !strings.HasPrefix(a.Path, "/redfish/v1/EventService/Subscriptions/") || a.Replaced != 0 {
			t.Fatalf("%s: arm %+v, %v", prof, a, err)
		}
		other := sub
		other.Owner, other.Context = "rackfence r1 h2 ", "rackfence r1 h2 epoch 1"
		if _, err := c.ArmEvents(ctx, g, "h2", other); err != nil {
			t.Fatalf("%s: arm h2: %v", prof, err)
		}
		sub.Context = "rackfence r1 h1 epoch 2" // a takeover
		a2, err := c.ArmEvents(ctx, g, "h1", sub)
		if err != nil || a2.Replaced != 1 || a2.Path == a.Path || a2.TestTarget == "" {
			t.Errorf("%s: re-arm %+v, %v", prof, a2, err)
		}
		if ok, err := c.EventSubscribed(ctx, a2.Path); !ok || err != nil {
			t.Errorf("%s: subscribed %v, %v", prof, ok, err)
		}
		if ok, err := c.EventSubscribed(ctx, a.Path); ok || err != nil {
			t.Errorf("%s: the replaced subscription is still listed (%v, %v)", prof, ok, err)
		}
		if err := c.SubmitTestEvent(ctx, g, "h1", a2.TestTarget); err != nil {
			t.Errorf("%s: test event: %v", prof, err)
		}
		if n, err := c.DisarmEvents(ctx, g, "h1", "rackfence r1 h1 "); n != 1 || err != nil {
			t.Errorf("%s: disarm %d, %v", prof, n, err)
		}
		if st := sim.State(0).Events; len(st.Subscriptions) != 1 || st.Subscriptions[0].Context != other.Context {
			t.Errorf("%s: after disarming h1: %+v", prof, st.Subscriptions)
		}
		_ = c.Close(ctx)
	}
}
