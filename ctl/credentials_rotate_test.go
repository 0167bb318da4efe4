package ctl

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestCredentialsRotate: refused (exit 4, naming --bmc-account-rotation)
// for a host whose agent does not rotate; with --wait it blocks until the
// holder answers the request, then shows the new rotation time.
func TestCredentialsRotate(t *testing.T) {
	c := startCoordinator(t)
	ctx := context.Background()
	c.mustCtl(t, "", "host", "apply", "-f", "testdata/hosts.yaml")
	ag := c.agent(t, "r1", "agent-r1-rotate")
	r := c.ctl(t, "", "credentials", "rotate", "r1-h01")
	if r.code != ExitConflict || !strings.Contains(r.stderr, "--bmc-account-rotation") {
		t.Fatalf("a host without a BMC account record: %s", r)
	}
	if r := c.ctl(t, "", "credentials", "rotate"); r.code != ExitUsage {
		t.Fatalf("no host: %s", r)
	}
	rotate := func(request uint64) {
		t.Helper()
		if _, err := ag.cl.PutBMCAccount(ctx, "r1-h01", wire.BMCAccountWrite{Epoch: ag.epoch, Op: wire.BMCAccountOpPending, Username: "rackfence", Password: "Ctl-pass-1"}); err != nil {
			t.Error(err)
		}
		if _, err := ag.cl.PutBMCAccount(ctx, "r1-h01", wire.BMCAccountWrite{Epoch: ag.epoch, Op: wire.BMCAccountOpConfirm, Request: request}); err != nil {
			t.Error(err)
		}
	}
	rotate(0)
	done := make(chan struct{})
	go func() { // the holder answers the request at its next look
		defer close(done)
		for i := 0; i < 600; i++ {
			h, err := ag.cl.GetHost(ctx, "r1-h01")
			if err == nil && h.Intents != nil && h.Intents.RotateCredentials != nil {
				rotate(h.Intents.RotateCredentials.CreatedIndex)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	r = c.mustCtl(t, "", "credentials", "rotate", "r1-h01", "--reason", "audit", "--wait")
	<-done
	if !strings.Contains(r.stdout, "r1-h01: BMC account rackfence rotated under epoch") || !strings.Contains(r.stdout, "rotate done: 1 host(s)") {
		t.Fatalf("--wait output: %s", r)
	}
	if r := c.mustCtl(t, "", "host", "bmc-account", "r1-h01"); !strings.Contains(r.stdout, "Rotated") {
		t.Fatalf("host bmc-account: %s", r)
	}
}
