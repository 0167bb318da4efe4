package client_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

func TestTokenMethods(t *testing.T) {
	ctx := context.Background()
	m := startMember(t, "n1", "127.0.0.1", nil)
	admin := adminClient(t, m, m.URL)

	v1, err := admin.CreateToken(ctx, wire.TokenRequest{Role: wire.RoleViewer, TTL: "2h", Name: "ci-viewer"})
	if err != nil || v1.ID == "" || v1.ExpiresAt.IsZero() || v1.Name != "ci-viewer" {
		t.Fatalf("create: %+v %v", v1, err)
	}
	if _, err := admin.CreateToken(ctx, wire.TokenRequest{Role: wire.RoleViewer, TTL: "tomorrow"}); !client.IsBadRequest(err) {
		t.Fatalf("bad ttl: %v", err)
	} else if e, _ := client.AsError(err); e.Field != "ttl" {
		t.Fatalf("bad ttl names field %q", e.Field)
	}
	v2, err := admin.CreateToken(ctx, wire.TokenRequest{Role: wire.RoleViewer})
	if err != nil || !v2.ExpiresAt.IsZero() {
		t.Fatalf("create without ttl: %+v %v", v2, err)
	}
	var l wire.List[wire.Token]
	err = admin.TokensPages(ctx, client.PageOptions{Limit: 2}, func(p *wire.List[wire.Token]) error {
		l.Items = append(l.Items, p.Items...)
		return nil
	})
	if err != nil || len(l.Items) != 3 || l.Items[1].ID != v1.ID || l.Items[2].ID != v2.ID {
		t.Fatalf("list: %+v %v", l, err)
	}

	// SetToken swaps the token of a client (and of its copies) live.
	c, err := client.New(client.Config{Coordinator: m.URL, Token: v1.Token, RetryFor: -1})
	if err != nil {
		t.Fatal(err)
	}
	stale := c.WithStale(true)
	if _, err := c.Racks(ctx); err != nil {
		t.Fatal(err)
	}
	c.SetToken(v2.Token)
	if r, err := admin.RevokeToken(ctx, v1.ID); err != nil || r.ID != v1.ID {
		t.Fatalf("revoke: %+v %v", r, err)
	}
	if _, err := c.Racks(ctx); err != nil {
		t.Fatalf("after SetToken and revoking the old token: %v", err)
	}
	if _, err := stale.Racks(ctx); err != nil {
		t.Fatalf("a WithStale copy did not get the new token: %v", err)
	}
	c.SetToken(v1.Token)
	if _, err := c.Racks(ctx); !client.IsUnauthorized(err) {
		t.Fatalf("revoked token: %v", err)
	}
	if _, err := admin.RevokeToken(ctx, v1.ID); !client.IsNotFound(err) {
		t.Fatalf("revoke twice: %v", err)
	}
	a, err := admin.Audit(ctx, 2)
	if err != nil || len(a.Items) != 2 || a.Items[1].Route != "/v1/tokens/:id" || a.Items[1].Code != 404 {
		t.Fatalf("audit: %+v %v", a, err)
	}
}

// TestRevokeLatencyOnEveryMember measures, on a real 3-member cluster,
// the time from sending DELETE /v1/tokens/{id} to the first 401 each
// member answers to GET /v1/status (answered locally by each member) with
// that token. The figure is logged; only a generous sanity deadline is
// asserted.
func TestRevokeLatencyOnEveryMember(t *testing.T) {
	ctx := context.Background()
	m1 := startMember(t, "n1", "127.0.0.1", nil)
	admin := adminClient(t, m1, m1.URL)
	tok, _ := client.ReadTokenFile(m1.TokenFile)
	m2 := startMember(t, "n2", "127.0.0.2", m1)
	m3 := startMember(t, "n3", "127.0.0.3", m1)
	testenv.Eventually(t, 2*time.Minute, "three members", func() error {
		l, err := admin.Members(ctx)
		if err != nil {
			return err
		}
		if len(l.Items) != 3 {
			return fmt.Errorf("%d members", len(l.Items))
		}
		return nil
	})
	const rounds = 5
	members := []*rig.Coordinator{m1, m2, m3}
	lat := map[string][]time.Duration{}
	for round := 0; round < rounds; round++ {
		v, err := admin.CreateToken(ctx, wire.TokenRequest{Role: wire.RoleViewer, Name: fmt.Sprintf("revoke-%d", round)})
		if err != nil {
			t.Fatal(err)
		}
		// Every member serves the token before the revocation.
		clients := map[string]*client.Client{}
		for _, m := range members {
			c, _ := client.New(client.Config{Coordinator: m.URL, Token: v.Token, RetryFor: -1})
			clients[m.NodeID] = c
			testenv.Eventually(t, time.Minute, m.NodeID+" accepts the new token", func() error {
				_, err := c.Status(ctx)
				return err
			})
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		start := make(chan time.Time)
		for _, m := range members {
			wg.Add(1)
			go func(id string, c *client.Client) {
				defer wg.Done()
				t0 := <-start
				deadline := t0.Add(30 * time.Second)
				for time.Now().Before(deadline) {
					if _, err := c.Status(ctx); client.IsUnauthorized(err) {
						d := time.Since(t0)
						mu.Lock()
						lat[id] = append(lat[id], d)
						mu.Unlock()
						return
					}
				}
				t.Errorf("%s still accepts the token 30s after its revocation", id)
			}(m.NodeID, clients[m.NodeID])
		}
		t0 := time.Now()
		for range members {
			start <- t0
		}
		if _, err := admin.RevokeToken(ctx, v.ID); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
	}
	for _, m := range members {
		ds := lat[m.NodeID]
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		if len(ds) == 0 {
			continue
		}
		st, _ := clients0(m, tok).Status(ctx)
		t.Logf("revoke → 401 on %s (%s): min %v, median %v, max %v over %d revocations",
			m.NodeID, st.State, ds[0].Round(time.Microsecond), ds[len(ds)/2].Round(time.Microsecond), ds[len(ds)-1].Round(time.Microsecond), len(ds))
	}
}

func clients0(m *rig.Coordinator, tok string) *client.Client {
	c, _ := client.New(client.Config{Coordinator: m.URL, Token: tok})
	return c
}
