package bmc

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
)

// TestRedfishPowerResetShapes: a power change reads the system's
// PowerState and Reset action and POSTs the reset type to the action's
// target with the system's ETag as If-Match; On falls back to ForceOn when
// only that is offered; a type outside the allowable values is refused
// without a POST; nothing is sent when the system already is in the state;
// a soft power-off on a system not offering GracefulShutdown is
// errclass.ErrUnsupported.
func TestRedfishPowerResetShapes(t *testing.T) {
	const sys = "/redfish/v1/Systems/1"
	const target = sys + "/Actions/ComputerSystem.Reset"
	f := oneSystem(t, false, map[string]any{"Actions": map[string]any{"#ComputerSystem.Reset": map[string]any{
		"target": target, "ResetType@Redfish.AllowableValues": []string{"ForceOn", "ForceOff", "GracefulShutdown"}}}})
	var sent []string
	f.actions[target] = func(f *fakeRF, b map[string]any) int {
		typ, _ := b["ResetType"].(string)
		sent = append(sent, typ)
		switch typ {
		case "ForceOn":
			f.set(sys, map[string]any{"PowerState": "On"})
		case "ForceOff", "GracefulShutdown":
			f.set(sys, map[string]any{"PowerState": "Off"})
		default:
			return http.StatusBadRequest
		}
		return http.StatusNoContent
	}
	c, err := dialFake(t, f, "", "password")
	if err != nil {
		t.Fatal(err)
	}
	g, _ := leasedGuard(time.Minute, nil)
	ctx := testCtx(t)

	etag := f.etag(sys)
	if err := c.SetPower(ctx, g, "h1", true); err != nil {
		t.Fatal(err)
	}
	last := f.patches[len(f.patches)-1]
	if strings.Join(sent, ",") != "ForceOn" || last.Path != target || last.IfMatch != etag || len(last.Body) != 1 {
		t.Fatalf("power on offering ForceOn only: sent %v, last POST %+v (want If-Match %q, body {ResetType})", sent, last, etag)
	}
	if err := c.SetPower(ctx, g, "h1", true); err != nil || len(sent) != 1 {
		t.Fatalf("power on while on: %v, sent %v", err, sent)
	}
	if err := c.SoftPowerOff(ctx, g, "h1"); err != nil || strings.Join(sent, ",") != "ForceOn,GracefulShutdown" {
		t.Fatalf("soft power off: %v, sent %v", err, sent)
	}

	// Only On offered: a power-off is refused before any POST, a soft
	// power-off is unsupported.
	f.set(sys, map[string]any{"PowerState": "On", "Actions": map[string]any{"#ComputerSystem.Reset": map[string]any{
		"target": target, "ResetType@Redfish.AllowableValues": []string{"On"}}}})
	if err := c.SetPower(ctx, g, "h1", false); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Fatalf("ForceOff not offered: %v", err)
	}
	if err := c.SoftPowerOff(ctx, g, "h1"); !errors.Is(err, errclass.ErrUnsupported) {
		t.Fatalf("GracefulShutdown not offered: %v, want errclass.ErrUnsupported", err)
	}
	if len(sent) != 2 {
		t.Fatalf("a refused reset was sent: %v", sent)
	}
}
