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

// TestOtherListsPagesRestartExpired: the credentials and the tokens read
// page by page, whose view a real coordinator dropped between two pages
// (17 newer lists at newer indexes evicted it), fail with
// wire.ErrListExpired, or, with RestartExpired, go on after the last item
// given (after=): every item once, in the list's order, those created
// meanwhile at its end included.
func TestOtherListsPagesRestartExpired(t *testing.T) {
	if testing.Short() {
		t.Skip("a real coordinator")
	}
	m := rig.StartCoordinator(t, t.TempDir(), rig.CoordOpts{NodeID: "n1", IP: "127.0.0.1"})
	ctx := context.Background()
	cl := m.Admin
	for i := range 6 {
		if err := cl.SetCredentials(ctx, fmt.Sprintf("c%d", i), wire.Credentials{Username: "u", Password: "p"}); err != nil {
			t.Fatal(err)
		}
		if _, err := cl.CreateToken(ctx, wire.TokenRequest{Role: wire.RoleViewer, Name: fmt.Sprintf("t%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	stop := errors.New("stop")
	round := 0
	// evict writes an item at each list's end, then makes newer lists
	// until the one being read is no longer kept.
	evict := func() {
		round++
		for i := range client.MaxListViewsForTest + 1 {
			if err := cl.SetCredentials(ctx, fmt.Sprintf("z%d-%02d", round, i), wire.Credentials{Username: "u", Password: "p"}); err != nil {
				t.Fatal(err)
			}
			if _, err := cl.CreateToken(ctx, wire.TokenRequest{Role: wire.RoleViewer, Name: fmt.Sprintf("z%d-%02d", round, i)}); err != nil {
				t.Fatal(err)
			}
			if err := cl.CredentialsPages(ctx, client.PageOptions{Limit: 1}, func(*wire.List[wire.Credentials]) error { return stop }); !errors.Is(err, stop) {
				t.Fatal(err)
			}
		}
	}
	type read func(o client.PageOptions, fn func(id string)) error
	lists := []struct {
		name string
		read read
	}{
		{"credentials", func(o client.PageOptions, fn func(string)) error {
			return cl.CredentialsPages(ctx, o, func(l *wire.List[wire.Credentials]) error {
				for _, c := range l.Items {
					fn(c.Name)
				}
				return nil
			})
		}},
		{"tokens", func(o client.PageOptions, fn func(string)) error {
			return cl.TokensPages(ctx, o, func(l *wire.List[wire.Token]) error {
				for _, k := range l.Items {
					fn(k.Name)
				}
				return nil
			})
		}},
	}
	for _, l := range lists {
		t.Run(l.name, func(t *testing.T) {
			for _, restart := range []bool{false, true} {
				var got, restarted []string
				o := client.PageOptions{Limit: 2, RestartExpired: restart, Restarted: func(after string) { restarted = append(restarted, after) }}
				err := l.read(o, func(id string) {
					if got = append(got, id); len(got) == 2 {
						evict()
					}
				})
				if !restart {
					if !errors.Is(err, wire.ErrListExpired) {
						t.Fatalf("without RestartExpired: %v, want list_expired", err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("with RestartExpired: %v", err)
				}
				if len(restarted) != 1 {
					t.Errorf("Restarted called %d times (%v), want once", len(restarted), restarted)
				}
				if len(slices.Compact(slices.Clone(got))) != len(got) {
					t.Fatalf("restarted list gave %v: an item twice", got)
				}
				last := fmt.Sprintf("z%d-%02d", round, client.MaxListViewsForTest)
				if !slices.Contains(got, last) {
					t.Errorf("restarted list gave %v: %s, created at its end meanwhile, missing", got, last)
				}
			}
		})
	}
}
