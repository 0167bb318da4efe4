package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/internal/version"
)

// prog is a Program with one flag (--n, at least 1) whose Run logs one line
// and returns runErr.
func prog(common *Common, runErr error, ran *bool) (Program, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	fs := pflag.NewFlagSet("prog", pflag.ContinueOnError)
	n := fs.Int("n", 1, "a number, at least 1")
	return Program{
		Name: "prog", Flags: fs, Common: common, Stdout: &out, Stderr: &errb,
		Validate: func() error {
			if *n < 1 {
				return fmt.Errorf("--n %d: use 1 or more", *n)
			}
			return nil
		},
		Run: func(ctx context.Context, log *slog.Logger) error {
			*ran = true
			log.Info("running", "n", *n)
			return runErr
		},
	}, &out, &errb
}

func TestExitCodes(t *testing.T) {
	for _, c := range []struct {
		name   string
		args   []string
		env    map[string]string
		runErr error
		code   int
		ran    bool
		stderr string
	}{
		{name: "ok", code: ExitOK, ran: true},
		{name: "help", args: []string{"--help"}, code: ExitOK},
		{name: "unknown flag", args: []string{"--sideways"}, code: ExitUsage, stderr: "unknown flag: --sideways"},
		{name: "bad value", args: []string{"--n", "many"}, code: ExitUsage, stderr: `"many" for "--n"`},
		{name: "bad env", env: map[string]string{"RACKFENCE_N": "many"}, code: ExitUsage, stderr: "RACKFENCE_N"},
		{name: "validate", args: []string{"--n", "0"}, code: ExitUsage, stderr: "prog: --n 0: use 1 or more"},
		{name: "validate env", env: map[string]string{"RACKFENCE_N": "0"}, code: ExitUsage, stderr: "--n 0"},
		{name: "bad log level", args: []string{"--log-level", "loud"}, code: ExitUsage, stderr: `--log-level "loud"`},
		{name: "bad log format", args: []string{"--log-format", "xml"}, code: ExitUsage, stderr: `--log-format "xml"`},
		{name: "bad pprof addr", args: []string{"--pprof-addr", "nowhere"}, code: ExitUsage, stderr: "--pprof-addr"},
		{name: "run fails", runErr: errors.New("disk on fire"), code: ExitFailed, ran: true, stderr: "disk on fire"},
		{name: "run picks its code", runErr: Exit(4, errors.New("refused")), code: 4, ran: true, stderr: "refused"},
		// A stray RACKFENCE_VERSION (not a bool) must not stop the daemon.
		{name: "version env ignored", env: map[string]string{"RACKFENCE_VERSION": "v9"}, code: ExitOK, ran: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			ran := false
			p, _, errb := prog(&Common{}, c.runErr, &ran)
			if got := p.Main(c.args); got != c.code || ran != c.ran {
				t.Fatalf("exit %d ran %v, want exit %d ran %v; stderr:\n%s", got, ran, c.code, c.ran, errb)
			}
			if !strings.Contains(errb.String(), c.stderr) {
				t.Fatalf("stderr %q does not say %q", errb, c.stderr)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	old, oldCommit := version.Version, version.Commit
	version.Version, version.Commit = "v1.2.3-4-gabcdef", "abcdef0"
	defer func() { version.Version, version.Commit = old, oldCommit }()
	ran := false
	p, out, _ := prog(nil, nil, &ran)
	// --version wins over flags that would fail validation.
	if got := p.Main([]string{"--n", "0", "--version"}); got != ExitOK || ran {
		t.Fatalf("--version: exit %d ran %v", got, ran)
	}
	want := "prog v1.2.3-4-gabcdef (abcdef0, go"
	if !strings.HasPrefix(out.String(), want) || !strings.HasSuffix(out.String(), ")\n") {
		t.Fatalf("--version printed %q, want %q…)", out, want)
	}
}

func TestLogFormats(t *testing.T) {
	ran := false
	p, _, errb := prog(&Common{}, nil, &ran)
	if got := p.Main([]string{"--n", "7"}); got != ExitOK {
		t.Fatalf("exit %d: %s", got, errb)
	}
	var line struct {
		Msg string `json:"msg"`
		N   int    `json:"n"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(errb.Bytes()), &line); err != nil || line.Msg != "running" || line.N != 7 {
		t.Fatalf("default format is not JSON: %v: %q", err, errb)
	}
	p, _, errb = prog(&Common{}, nil, &ran)
	if got := p.Main([]string{"--log-format", "text", "--log-level", "warn"}); got != ExitOK {
		t.Fatalf("exit %d: %s", got, errb)
	}
	if errb.Len() != 0 {
		t.Fatalf("an info line got through --log-level warn: %q", errb)
	}
	p, _, errb = prog(&Common{}, nil, &ran)
	if got := p.Main([]string{"--log-format", "text"}); got != ExitOK || !strings.Contains(errb.String(), "msg=running n=1") {
		t.Fatalf("--log-format text: exit %d, %q", got, errb)
	}
}
