package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// member is one rackfence-coordinator process of these tests: its node
// ID, loopback address, data dir, ports, flags and process.
type member struct {
	id, ip, dir string
	http, raft  int
	args        []string
	proc        *testenv.Process
}

// url is the member's API (HTTPS, the default).
func (m *member) url() string { return fmt.Sprintf("https://%s:%d", m.ip, m.http) }

// clusterOpts change startCluster's members.
type clusterOpts struct {
	// env is more environment for every member's process.
	env []string
	// prepare, when not nil, runs for each member before any starts:
	// more flags (m.args), a file system under m.dir.
	prepare func(m *member)
}

// startCluster starts n members of one cluster (n1 on 127.0.0.1
// bootstraps, n2 on 127.0.0.2 … join it with the admin token in
// RACKFENCE_TOKEN) and returns them with the admin token once every
// joiner (n1 alone: n1) sees n voters and a leader.
func startCluster(t testing.TB, bin string, n int, o clusterOpts) ([]*member, string) {
	t.Helper()
	base := t.TempDir()
	ms := make([]*member, n)
	for i := range ms {
		ms[i] = newMember(t, base, i+1)
		if i > 0 {
			ms[i].args = append(ms[i].args, "--join", ms[0].url())
		}
		if o.prepare != nil {
			o.prepare(ms[i])
		}
	}
	ms[0].proc = testenv.Start(t, "n1", bin, o.env, ms[0].args...)
	token := waitToken(t, ms[0].dir)
	for _, m := range ms[1:] {
		m.proc = testenv.Start(t, m.id, bin, append([]string{"RACKFENCE_TOKEN=" + token}, o.env...), m.args...)
	}
	waiters := ms[1:]
	if n == 1 {
		waiters = ms
	}
	for _, m := range waiters {
		waitVoters(t, m, token, n)
	}
	return ms, token
}

func newMember(t testing.TB, base string, i int) *member {
	ip := fmt.Sprintf("127.0.0.%d", i)
	m := &member{id: fmt.Sprintf("n%d", i), ip: ip, dir: filepath.Join(base, fmt.Sprint(i)),
		http: testenv.FreePort(t, ip), raft: testenv.FreePort(t, ip)}
	m.args = []string{"--node-id", m.id, "--data-dir", m.dir, "--http-addr", fmt.Sprintf("%s:%d", ip, m.http),
		"--raft-addr", fmt.Sprintf("%s:%d", ip, m.raft), "--raft-log-level", "error"}
	return m
}

func waitToken(t testing.TB, dir string) string {
	t.Helper()
	var token string
	testenv.Eventually(t, 60*time.Second, "admin token written", func() error {
		b, err := os.ReadFile(filepath.Join(dir, "admin.token"))
		token = strings.TrimSpace(string(b))
		if err != nil || token == "" {
			return fmt.Errorf("no token yet: %v", err)
		}
		return nil
	})
	return token
}

func waitVoters(t testing.TB, m *member, token string, n int) {
	t.Helper()
	testenv.Eventually(t, 90*time.Second, fmt.Sprintf("%d voters seen by %s", n, m.id), func() error {
		var st wire.ClusterStatus
		if _, err := do("GET", m.url()+"/v1/status", token, nil, &st); err != nil {
			return err
		}
		if len(st.Members) != n || st.Leader == "" {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
}
