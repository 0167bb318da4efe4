package client_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// BenchmarkClient measures the client against a real single-member
// coordinator: one linearizable GET, one stale GET, one PUT of a host spec,
// a list of 1,000 hosts, and a GET whose first member URL refuses
// connections (the failover cost).
//
//	go test -run '^$' -bench Client -benchtime 2s ./shared/client
func BenchmarkClient(b *testing.B) {
	m := startMember(b, "n1", "127.0.0.1", nil)
	ctx := context.Background()
	admin := adminClient(b, m, m.URL)
	for i := 0; i < 1000; i++ {
		if _, _, err := admin.ApplyHost(ctx, &wire.Host{Name: fmt.Sprintf("r%d-h%03d", i/100, i%100), Rack: fmt.Sprintf("r%d", i/100)}); err != nil {
			b.Fatal(err)
		}
	}
	dead := fmt.Sprintf("http://127.0.0.1:%d", testenv.FreePort(b, "127.0.0.1"))
	tok, err := client.ReadTokenFile(m.TokenFile)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("GetHost", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := admin.GetHost(ctx, "r0-h001"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("GetHostStale", func(b *testing.B) {
		st := admin.WithStale(true)
		for i := 0; i < b.N; i++ {
			if _, err := st.GetHost(ctx, "r0-h001"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ApplyHost", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			h := &wire.Host{Name: "r0-h001", Rack: "r0", Consumer: fmt.Sprint(i)}
			if _, _, err := admin.ApplyHost(ctx, h); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ListHosts1000", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			l, err := admin.ListHosts(ctx, client.HostFilter{})
			if err != nil || len(l.Items) != 1000 {
				b.Fatal(err)
			}
		}
	})
	b.Run("GetHostFirstMemberDown", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			// A fresh client each time, so every request starts at the
			// dead member instead of the sticky live one.
			c, _ := client.New(client.Config{Coordinator: dead + "," + m.URL, Token: tok})
			if _, err := c.GetHost(ctx, "r0-h001"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
