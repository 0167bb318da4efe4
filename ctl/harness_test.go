package ctl

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/rig"
	"github.com/rackfence/rackfence/testkit/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// coord is a real rackfence-coordinator process of one node
// (testkit/rig), with the names the ctl tests use.
type coord struct {
	url       string
	tokenFile string
	admin     *client.Client
	dir       string // data dir
	proc      *testenv.Process
}

// startCoordinator starts node n1 of tier "test" over TLS, with no
// credentials (the golden files list exactly what a test sets).
func startCoordinator(t *testing.T) *coord {
	t.Helper()
	rc := rig.StartCoordinator(t, t.TempDir(), rig.CoordOpts{Tier: "test", NodeID: "n1", NoCredentials: true})
	return &coord{url: rc.URL, tokenFile: rc.TokenFile, admin: rc.Admin, dir: filepath.Dir(rc.TokenFile), proc: rc.Proc}
}

// result is one rackfencectl run.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}

// ctl runs one command line in-process against c, with stdin.
func (c *coord) ctl(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return runCtl(t, map[string]string{"RACKFENCE_COORDINATOR": c.url, "RACKFENCE_TOKEN_FILE": c.tokenFile}, stdin, nil, args...)
}

func runCtl(t *testing.T, env map[string]string, stdin string, tweak func(*IO), args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	io := IO{
		Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return env[k] },
	}
	if tweak != nil {
		tweak(&io)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code := Main(ctx, args, io)
	return result{out.String(), errb.String(), code}
}

// mustCtl runs a command that must exit 0.
func (c *coord) mustCtl(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	r := c.ctl(t, stdin, args...)
	if r.code != 0 {
		t.Fatalf("rackfencectl %s: %s", strings.Join(args, " "), r)
	}
	return r
}

// fakeAgent plays the rack agent through the real API (agent token, rack
// lease, status reports), so tests control exactly what the agent reports.
type fakeAgent struct {
	cl     *client.Client
	rack   string
	epoch  uint64
	holder string
}

func (c *coord) agent(t *testing.T, rack, holder string) *fakeAgent {
	t.Helper()
	ctx := context.Background()
	tok, err := c.admin.CreateToken(ctx, wire.TokenRequest{Role: wire.RoleAgent, Rack: rack})
	if err != nil {
		t.Fatal(err)
	}
	cl, _, err := testenv.AgentClient(ctx, client.Config{Coordinator: c.url, Token: tok.Token}, holder)
	if err != nil {
		t.Fatal(err)
	}
	l, err := cl.AcquireLease(ctx, rack, wire.LeaseRequest{Holder: holder, TTL: wire.Duration(5 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	return &fakeAgent{cl: cl, rack: rack, epoch: l.Epoch, holder: holder}
}

// report writes a status for host, acknowledging its current intents when ack.
func (a *fakeAgent) report(t *testing.T, host string, st wire.HostStatus, ack bool, extra ...func(*wire.StatusReport)) {
	t.Helper()
	ctx := context.Background()
	if _, err := a.cl.RenewLease(ctx, a.rack, wire.LeaseRequest{Holder: a.holder, Epoch: a.epoch, TTL: wire.Duration(5 * time.Minute)}); err != nil {
		t.Fatalf("renew lease: %v", err)
	}
	rep := wire.StatusReport{Epoch: a.epoch, Status: st}
	if ack {
		admin := a.cl // agents may read their rack's hosts
		h, err := admin.GetHost(ctx, host)
		if err != nil {
			t.Fatal(err)
		}
		if in := h.Intents; in != nil {
			if in.Detach != nil {
				rep.Acks = append(rep.Acks, wire.IntentAck{Kind: wire.IntentDetach, CreatedIndex: in.Detach.CreatedIndex})
			}
			if in.Drain != nil {
				rep.Acks = append(rep.Acks, wire.IntentAck{Kind: wire.IntentDrain, CreatedIndex: in.Drain.CreatedIndex})
			}
		}
	}
	for _, f := range extra {
		f(&rep)
	}
	if err := a.cl.ReportStatus(ctx, host, rep); err != nil {
		t.Fatalf("report %s: %v", host, err)
	}
}

var (
	reIndex = regexp.MustCompile(`("?(?:createdIndex|modifiedIndex|specIndex|index|epoch|ackEpoch|commitIndex)"?:\s*)\d+`)
	reTime  = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	reEpoch = regexp.MustCompile(`lease epoch \d+`)
)

// normalize replaces what changes from run to run (Raft indexes, times).
func normalize(s string) string {
	s = reIndex.ReplaceAllString(s, "${1}N")
	s = reTime.ReplaceAllString(s, "TIME")
	s = reEpoch.ReplaceAllString(s, "lease epoch N")
	return s
}

// golden compares got with testdata/NAME (rewritten with -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	got = normalize(got)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./ctl -run %s -update to create it)", err, t.Name())
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test ./ctl -update rewrites it)\n--- want\n%s--- got\n%s", name, want, got)
	}
}

var reANSI = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)
