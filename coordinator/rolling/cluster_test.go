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
	"github.com/rackfence/rackfence/testkit/testenv"
)

// member is one coordinator process; bin says which binary runs it.
type member struct {
	id, dir        string
	url            string
	httpP, raftP   int
	keyFile        string
	proc           *testenv.Process
	bin            string
	current        bool // bin is the current tree's binary
	joinURL, token string
}

// gateFlags are the current binary's only (the old one refuses them):
// frequent reads of the members' health and state hashes every 16 entries.
var gateFlags = []string{"--probe-interval", "300ms", "--hash-check-interval", "1s", "--hash-every", "16"}

func (m *member) args(join bool) []string {
	a := []string{"--node-id", m.id, "--data-dir", m.dir, "--http-addr", fmt.Sprintf("127.0.0.1:%d", m.httpP),
		"--raft-addr", fmt.Sprintf("127.0.0.1:%d", m.raftP), "--insecure-plaintext", "--tier", "rolling",
		"--secrets-key-file", m.keyFile}
	if join && m.joinURL != "" {
		a = append(a, "--join", m.joinURL, "--join-token-file", m.token)
	}
	if m.current {
		a = append(a, gateFlags...)
	}
	return a
}

// start runs the member's binary and waits for its health.
func (m *member) start(t *testing.T, join bool) {
	t.Helper()
	name := fmt.Sprintf("%s (%s)", m.id, m.label())
	m.proc = testenv.Start(t, name, m.bin, nil, m.args(join)...)
	testenv.Eventually(t, 60*time.Second, name+" serving", func() error {
		if m.proc.Exited() {
			t.Fatalf("%s exited:\n%s", name, m.proc.Output())
		}
		code, _, err := health(m.url)
		if err != nil {
			return err
		}
		if code != 200 {
			return fmt.Errorf("health %d", code)
		}
		return nil
	})
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

// newMembers lays out three members on 127.0.0.1; m1 bootstraps.
func newMembers(t *testing.T, dir string) []*member {
	var ms []*member
	for i := 1; i <= 3; i++ {
		m := &member{id: fmt.Sprintf("m%d", i), dir: filepath.Join(dir, fmt.Sprintf("m%d", i)),
			httpP: testenv.FreePort(t, "127.0.0.1"), raftP: testenv.FreePort(t, "127.0.0.1"),
			keyFile: filepath.Join(dir, "m1", "secrets.key")}
		m.url = fmt.Sprintf("http://127.0.0.1:%d", m.httpP)
		ms = append(ms, m)
	}
	for _, m := range ms[1:] {
		m.joinURL, m.token = ms[0].url, filepath.Join(ms[0].dir, "admin.token")
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
