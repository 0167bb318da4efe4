package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/internal/envflag"
)

func TestEnvFillsFlagsNotGiven(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	rack := fs.String("rack", "", "")
	ttl := fs.Duration("lease-ttl", 10*time.Second, "")
	workers := fs.Int("workers", 256, "")
	t.Setenv("RACKFENCE_RACK", "from-env")
	t.Setenv("RACKFENCE_LEASE_TTL", "4s")
	t.Setenv("RACKFENCE_WORKERS", "64")
	if err := fs.Parse([]string{"--workers", "8"}); err != nil {
		t.Fatal(err)
	}
	if err := envflag.Apply(fs); err != nil {
		t.Fatal(err)
	}
	if *rack != "from-env" || *ttl != 4*time.Second {
		t.Fatalf("env not applied: rack %q ttl %s", *rack, *ttl)
	}
	if *workers != 8 {
		t.Fatalf("env overrode a flag given on the command line: workers %d", *workers)
	}
	t.Setenv("RACKFENCE_LEASE_TTL", "soon")
	fs2 := pflag.NewFlagSet("y", pflag.ContinueOnError)
	fs2.Duration("lease-ttl", time.Second, "")
	if err := envflag.Apply(fs2); err == nil {
		t.Fatal("a bad RACKFENCE_LEASE_TTL was accepted")
	}
}

func TestBadFlagsFailBeforeAnyRequest(t *testing.T) {
	tok := filepath.Join(t.TempDir(), "tok")
	if err := os.WriteFile(tok, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A coordinator URL nobody listens on: these must fail on the flags,
	// not by trying to reach it.
	base := []string{"--coordinator", "http://127.0.0.1:1", "--token-file", tok, "--rack", "r1"}
	for _, c := range []struct {
		name string
		args []string
		want int
	}{
		// Usage errors (exit 2): caught by Config.Validate before any
		// file is read or request sent.
		{"no rack", []string{"--token-file", tok}, 2},
		{"no token file", []string{"--rack", "r1"}, 2},
		{"unknown flag", []string{"--sideways"}, 2},
		{"bad provisioner", append(base, "--provisioner", "magic"), 2},
		{"zero workers", append(base, "--workers", "0"), 2},
		{"negative max procs", append(base, "--max-procs", "-1"), 2},
		{"too many max procs", append(base, "--max-procs", "5000"), 2},
		{"short ttl", append(base, "--lease-ttl", "100ms"), 2},
		{"ironic without url", append(base, "--provisioner", "ironic"), 2},
		{"ironic deploy kernel alone", append(base, "--provisioner", "ironic", "--ironic-url", "http://127.0.0.1:1",
			"--ironic-deploy-kernel", "http://images/ipa.kernel"), 2},
		{"ironic deploy iso not a URL", append(base, "--provisioner", "ironic", "--ironic-url", "http://127.0.0.1:1",
			"--ironic-deploy-iso", "/srv/ipa.iso"), 2},
		{"bad log level", append(base, "--log-level", "loud"), 2},
		{"bad log format", append(base, "--log-format", "xml"), 2},
		{"negative bmc timeout", append(base, "--bmc-timeout", "-1s"), 2},
		{"pprof without metrics addr", append(base, "--pprof"), 2},
		{"image cache without artifact addr", append(base, "--image-cache-dir", "/tmp/c"), 2},
		{"artifact addr on every address", append(base, "--artifact-addr", ":8090"), 2},
		{"bad image cache size", append(base, "--artifact-addr", "127.0.0.1:0", "--image-cache-dir", "/tmp/c", "--image-cache-size", "big"), 2},
		{"bad coordinator", []string{"--coordinator", "::nope", "--token-file", tok, "--rack", "r1"}, 2},
		// A flag set well but a token file that is not there: the start
		// fails (exit 1), still before any request.
		{"missing token file", []string{"--coordinator", "http://127.0.0.1:1", "--token-file", tok + ".gone", "--rack", "r1"}, 1},
	} {
		// Reaching for the coordinator would block in the lease loop.
		if got := run(c.args); got != c.want {
			t.Errorf("%s: exit %d, want %d", c.name, got, c.want)
		}
	}
}
