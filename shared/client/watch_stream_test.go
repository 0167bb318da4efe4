package client_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// TestFollowRack: FollowRack sees every change of a rack through a
// streamed watch, opens the stream again at the last index when the
// member restarts (the changes made while it was down arrive after), and
// ends with a 401 *client.Error once its token is revoked.
func TestFollowRack(t *testing.T) {
	if testing.Short() {
		t.Skip("a real coordinator, restarted")
	}
	m := rig.StartCoordinator(t, t.TempDir(), rig.CoordOpts{NodeID: "n1", IP: "127.0.0.1"})
	admin := m.Admin
	ctx := context.Background()
	tr, err := admin.CreateToken(ctx, wire.TokenRequest{Role: wire.RoleViewer})
	if err != nil {
		t.Fatal(err)
	}
	viewer, err := client.New(client.Config{Coordinator: m.URL, Token: tr.Token, UserAgent: "client-test", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	host := func(name string) *wire.Host {
		return &wire.Host{Name: name, Rack: "r1", Online: true, BMC: wire.BMC{Address: "redfish+http://127.0.0.1:9/redfish/v1/Systems/1", Credentials: "bmc"}}
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	has := func(names ...string) error {
		mu.Lock()
		defer mu.Unlock()
		for _, n := range names {
			if !seen[n] {
				return fmt.Errorf("%s not seen yet (seen %v)", n, seen)
			}
		}
		return nil
	}
	ended := make(chan error, 1)
	go func() {
		last := uint64(0)
		ended <- viewer.FollowRack(ctx, "r1", 0, client.FollowOptions{Heartbeat: time.Second}, func(r *wire.WatchResponse) error {
			if r.Index < last {
				return fmt.Errorf("answer at index %d after one at %d", r.Index, last)
			}
			last = r.Index
			mu.Lock()
			defer mu.Unlock()
			for _, h := range r.Hosts {
				seen[h.Name] = true
			}
			return nil
		})
	}()
	m.Apply(host("a"))
	m.Apply(host("b"))
	testenv.Eventually(t, time.Minute, "a and b followed", func() error { return has("a", "b") })

	m.Proc.Stop(10 * time.Second)
	m.Start()
	m.Apply(host("c"))
	testenv.Eventually(t, time.Minute, "c followed after the restart", func() error { return has("c") })

	if _, err := admin.RevokeToken(ctx, tr.ID); err != nil {
		t.Fatal(err)
	}
	m.Apply(host("d")) // a line after which the stream checks its token
	select {
	case err := <-ended:
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Status != 401 || !strings.Contains(ce.Message, "not known") {
			t.Fatalf("FollowRack ended with %v, want a 401 client.Error", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("FollowRack still follows a minute after its token was revoked")
	}
}
