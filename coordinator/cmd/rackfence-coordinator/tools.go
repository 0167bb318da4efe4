package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	capi "github.com/rackfence/rackfence/coordinator/api"
	"github.com/rackfence/rackfence/internal/daemon"
	"github.com/rackfence/rackfence/internal/jsonl"
	"github.com/rackfence/rackfence/shared/wire"
)

// The offline subcommands: rackfence-coordinator restore|recover|inspect.
// Each works on a stopped member's data dir (or a new one) and exits.
var tools = map[string]func(args []string) int{
	"restore": restoreMain,
	"recover": recoverMain,
	"inspect": inspectMain,
}

// toolsUsage is the first lines of rackfence-coordinator --help.
const toolsUsage = `Usage: rackfence-coordinator [flags]             run a member
       rackfence-coordinator restore --help        build a new cluster's data dir from a backup
       rackfence-coordinator recover --help        make a stopped member a cluster of one (lost quorum)
       rackfence-coordinator inspect --help        show what a stopped member's data dir holds

`

// runTool runs one subcommand as a daemon.Program (no daemon flags).
func runTool(name string, fs *pflag.FlagSet, validate func() error, run func() error, args []string) int {
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: rackfence-coordinator %s [flags]\n\n", name)
		fs.PrintDefaults()
	}
	return daemon.Program{Name: "rackfence-coordinator " + name, Flags: fs, Validate: validate,
		Run: func(context.Context, *slog.Logger) error { return run() }}.Main(args)
}

// auditTool appends one record of an offline action to the member's audit
// trail (DATA/audit.log, GET /v1/audit once it serves again).
func auditTool(dataDir, member, action, target string) error {
	w, err := jsonl.Open(filepath.Join(dataDir, "audit.log"), jsonl.Options{MaxBytes: capi.DefaultAuditMaxBytes})
	if err != nil {
		return fmt.Errorf("audit trail: %w", err)
	}
	defer w.Close()
	who := "unknown"
	if u, err := user.Current(); err == nil {
		who = u.Username
	}
	return w.Append(wire.AuditRecord{Time: time.Now().UTC(), Member: member, Actor: "os user " + who,
		Method: "OFFLINE", Route: "rackfence-coordinator " + action, Target: target})
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func validOutput(o string) error {
	if o != "text" && o != "json" {
		return fmt.Errorf("-o %q: use text or json", o)
	}
	return nil
}

var stdout io.Writer = os.Stdout

func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
