package rolling

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// member is one coordinator process (rig's); c.Bin says which binary
// runs it.
type member struct {
	id, dir string // node ID, data dir
	url     string
	c       *rig.Coordinator
	proc    *testenv.Process
	current bool // c.Bin is the current tree's binary
	// join are the flags of the first start of a member that joins m1
	// (none for m1); restarts go without them.
	join []string
}

// gateFlags are the current binary's only (the old one refuses them):
// frequent reads of the members' health and state hashes every 16 entries.
var gateFlags = []string{"--probe-interval", "300ms", "--hash-check-interval", "1s", "--hash-every", "16"}

// start runs the member's binary (with the join flags when join) and
// waits for its health.
func (m *member) start(t *testing.T, join bool) {
	t.Helper()
	var extra []string
	if join {
		extra = append(extra, m.join...)
	}
	if m.current {
		extra = append(extra, gateFlags...)
	}
	m.c.Start(extra...)
	m.proc = m.c.Proc
}

func (m *member) label() string {
	if m.current {
		return "current"
	}
	return oldCommit
}

// health reads a member's GET /v1/health (an old binary's has no version
// or hashes).
func health(url string) (int, wire.Health, error) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url + "/v1/health")
	if err != nil {
		return 0, wire.Health{}, err
	}
	defer resp.Body.Close()
	var h wire.Health
	err = json.NewDecoder(resp.Body).Decode(&h)
	return resp.StatusCode, h, err
}

// newMembers lays out three members on 127.0.0.1, plaintext, sharing
// m1's secrets key file; m1 bootstraps, m2 and m3 join it.
func newMembers(t *testing.T, dir string) []*member {
	var ms []*member
	keyFile := filepath.Join(dir, "m1", "secrets.key")
	for i := 1; i <= 3; i++ {
		id := fmt.Sprintf("m%d", i)
		mdir := filepath.Join(dir, id)
		c := rig.NewCoordinator(t, mdir, rig.CoordOpts{NodeID: id, Tier: "rolling", Insecure: true, DataDir: mdir,
			Args: []string{"--secrets-key-file", keyFile}})
		ms = append(ms, &member{id: id, dir: mdir, url: c.URL, c: c})
	}
	for _, m := range ms[1:] {
		m.join = []string{"--join", ms[0].url, "--join-token-file", ms[0].c.TokenFile}
		// A joiner writes no admin token: the cluster's is m1's.
		m.c.TokenFile = ms[0].c.TokenFile
	}
	return ms
}

func urls(ms []*member) string {
	var u []string
	for _, m := range ms {
		u = append(u, m.url)
	}
	return strings.Join(u, ",")
}

// memberClient reads one member's local state (?stale=true).
func memberClient(t *testing.T, m *member, token string) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{Coordinator: m.url, Token: token, Stale: true, RetryFor: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}
