package client_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
)

// TestListHostsPagesRestartExpired: a host list whose view the
// coordinator dropped (17 newer lists evicted it) fails with
// wire.ErrListExpired, or, with RestartExpired, goes on by itself after
// the last host given: no host twice, the hosts created meanwhile after
// it included, one created meanwhile before it missed (as documented).
func TestListHostsPagesRestartExpired(t *testing.T) {
	if testing.Short() {
		t.Skip("a real coordinator")
	}
	m := rig.StartCoordinator(t, t.TempDir(), rig.CoordOpts{NodeID: "n1", IP: "127.0.0.1"})
	ctx := context.Background()
	host := func(name string) *wire.Host {
		return &wire.Host{Name: name, Rack: "r1", Online: true, BMC: wire.BMC{Address: "redfish+http://127.0.0.1:9/redfish/v1/Systems/1", Credentials: "bmc"}}
	}
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		m.Apply(host(n))
	}
	stop := errors.New("stop")
	evict := func(round int) {
		m.Apply(host("a0" + fmt.Sprint(round))) // sorts before the last host given
		for i := range client.MaxListViewsForTest + 1 {
			m.Apply(host(fmt.Sprintf("x%d-%02d", round, i)))
			if err := m.Admin.ListHostsPages(ctx, client.HostFilter{}, client.PageOptions{Limit: 1}, func(*wire.List[wire.Host]) error { return stop }); !errors.Is(err, stop) {
				t.Fatal(err)
			}
		}
	}
	for _, restart := range []bool{false, true} {
		var got []string
		pages := 0
		err := m.Admin.ListHostsPages(ctx, client.HostFilter{}, client.PageOptions{Limit: 2, RestartExpired: restart}, func(l *wire.List[wire.Host]) error {
			for _, h := range l.Items {
				got = append(got, h.Name)
			}
			if pages++; pages == 1 {
				evict(pages + len(got) + map[bool]int{false: 0, true: 100}[restart])
			}
			return nil
		})
		if !restart {
			if !errors.Is(err, wire.ErrListExpired) {
				t.Fatalf("without RestartExpired: %v, want list_expired", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Fatalf("restarted list gave %v: want each host once, in order", got)
		}
		for _, want := range []string{"a", "b", "c", "f", "x103-00", "x103-16"} {
			if !slices.Contains(got, want) {
				t.Fatalf("restarted list gave %v: %s missing", got, want)
			}
		}
		if slices.Contains(got, "a0103") {
			t.Fatalf("restarted list gave %v: a0103, created before the last host given, cannot be in it", got)
		}
	}
}
