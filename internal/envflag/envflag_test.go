package envflag

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestApply(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	addr := fs.String("http-addr", "127.0.0.1:7480", "")
	given := fs.String("node-id", "", "")
	peers := fs.StringArray("peer-tier", nil, "")
	n := fs.Int("workers", 32, "")
	t.Setenv("RACKFENCE_HTTP_ADDR", "127.0.0.2:1")
	t.Setenv("RACKFENCE_NODE_ID", "from-env")
	t.Setenv("RACKFENCE_PEER_TIER", "a=http://x, b=http://y")
	if err := fs.Parse([]string{"--node-id", "from-flag"}); err != nil {
		t.Fatal(err)
	}
	if err := Apply(fs); err != nil {
		t.Fatal(err)
	}
	if *addr != "127.0.0.2:1" || *given != "from-flag" || *n != 32 {
		t.Fatalf("http-addr %q node-id %q workers %d", *addr, *given, *n)
	}
	if len(*peers) != 2 || (*peers)[1] != "b=http://y" {
		t.Fatalf("peer-tier %q", *peers)
	}
	t.Setenv("RACKFENCE_WORKERS", "many")
	if err := Apply(fs); err == nil || !strings.Contains(err.Error(), "RACKFENCE_WORKERS") {
		t.Fatalf("bad value: %v, want an error naming RACKFENCE_WORKERS", err)
	}
}

func TestCommandLineOnlySkipsEnv(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	v := fs.Bool("version", false, "")
	level := fs.String("log-level", "info", "")
	CommandLineOnly(fs, "version")
	t.Setenv("RACKFENCE_VERSION", "v1.2.3")
	t.Setenv("RACKFENCE_LOG_LEVEL", "debug")
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if err := Apply(fs); err != nil {
		t.Fatalf("RACKFENCE_VERSION was read for a command-line-only flag: %v", err)
	}
	if *v || *level != "debug" {
		t.Fatalf("version %v log-level %q: want false and debug", *v, *level)
	}
}
