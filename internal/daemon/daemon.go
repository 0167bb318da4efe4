// Package daemon is the one start-up path of every rackfence binary:
// flags (with RACKFENCE_* from the environment, internal/envflag), --version,
// Validate before anything starts, a slog logger (JSON by default), an
// optional pprof listener, a context cancelled by SIGTERM or SIGINT, and
// the exit codes docs/operator.md lists.
//
// A daemon's cmd/NAME/flags.go declares its flags and a Config with
// Validate() (hashicorp/raft's ValidateConfig habit) that embeds Common;
// main.go wires:
//
//	func main() { os.Exit(daemon.Main("rackfence-agent", &Config{}, serve, os.Args[1:])) }
//
// Tools without logging flags (rackfence-chaos, rackfence-load) fill a
// Program themselves.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/internal/envflag"
	"github.com/rackfence/rackfence/internal/version"
)

// Exit codes of every rackfence binary (docs/operator.md; rackfencectl
// adds 3, 4 and 5, rackfence-coordinator ExitDataDamaged).
const (
	// ExitOK: done, or --help / --version.
	ExitOK = 0
	// ExitFailed: the program started and failed (a listener, the data
	// dir, the coordinator refused, ...).
	ExitFailed = 1
	// ExitUsage: a flag, its RACKFENCE_* variable or a combination of
	// flags is wrong; nothing was started.
	ExitUsage = 2
	// ExitDataDamaged: a data dir file is damaged or missing (raft.db cut
	// short, snapshots gone); the member refused to start and restarting
	// it will not help. The message names the file and the runbook.
	ExitDataDamaged = 6
)

// ExitError makes Program.Main exit with Code; Err (optional) is printed.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Exit returns an error that makes Program.Main exit with code, printing
// err when it is not nil.
func Exit(code int, err error) error { return &ExitError{Code: code, Err: err} }

// Daemon is a daemon's Config (cmd/NAME/flags.go): its flags, its
// Validate, and the Common it embeds.
type Daemon interface {
	// Flags declares the daemon's own flags, bound to its fields, on a new
	// flag set.
	Flags() *pflag.FlagSet
	// Validate checks the parsed values; every error names the flag, what
	// is wrong and what to do.
	Validate() error
	// common is promoted from the embedded Common.
	common() *Common
}

func (c *Common) common() *Common { return c }

// Main runs daemon name: c's flags and Common's, --version, c.Validate,
// then serve(ctx, c, log). It returns the exit code.
func Main[C Daemon](name string, c C, serve func(context.Context, C, *slog.Logger) error, args []string) int {
	return Program{Name: name, Flags: c.Flags(), Common: c.common(), Validate: c.Validate,
		Run: func(ctx context.Context, log *slog.Logger) error { return serve(ctx, c, log) }}.Main(args)
}

// Program is one binary's start-up.
type Program struct {
	// Name is the binary's name: flag-set name, error prefix, --version.
	Name string
	// Flags holds the binary's own flags (cmd/NAME/flags.go). Main adds
	// --version, and Common's flags when Common is set.
	Flags *pflag.FlagSet
	// Common, when set, adds --log-level, --log-format and --pprof-addr
	// and acts on them. Nil (a tool rather than a daemon): no such flags,
	// Run gets a JSON logger at info.
	Common *Common
	// Validate checks the parsed configuration (Config.Validate). An error
	// is a usage error: printed, exit 2, nothing started. Every error
	// names the flag, what is wrong and what to do.
	Validate func() error
	// Run is the program. ctx ends on SIGTERM or SIGINT. A returned
	// error exits 1 (an *ExitError its own code); nil exits 0.
	Run func(ctx context.Context, log *slog.Logger) error
	// Stdout and Stderr default to the process's.
	Stdout, Stderr io.Writer
}

// Main parses args (without the program name), handles --help and
// --version, validates, starts logging and pprof, runs, and returns the
// exit code.
func (p Program) Main(args []string) int {
	stdout, stderr := p.Stdout, p.Stderr
	if stdout == nil {
		stdout = os.Stdout
	}
	if stderr == nil {
		stderr = os.Stderr
	}
	fs := p.Flags
	if fs == nil {
		fs = pflag.NewFlagSet(p.Name, pflag.ContinueOnError)
	}
	fs.SetOutput(stderr)
	showVersion := fs.Bool("version", false, "print the version (NAME VERSION (COMMIT, GO VERSION)) and exit 0")
	envflag.CommandLineOnly(fs, "version")
	if p.Common != nil {
		p.Common.AddFlags(fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return ExitOK
		}
		fmt.Fprintf(stderr, "%s: %v (see %s --help)\n", p.Name, err, p.Name)
		return ExitUsage
	}
	if *showVersion {
		fmt.Fprintln(stdout, version.Get(p.Name))
		return ExitOK
	}
	if err := envflag.Apply(fs); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", p.Name, err)
		return ExitUsage
	}
	if err := p.validate(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", p.Name, err)
		return ExitUsage
	}
	var common Common // Logger falls back to the defaults
	if p.Common != nil {
		common = *p.Common
	}
	log := common.Logger(stderr)
	slog.SetDefault(log)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	stopPprof, err := common.startPprof(log)
	if err != nil {
		log.Error(p.Name+" failed", "err", err.Error())
		return ExitFailed
	}
	defer stopPprof()
	err = p.Run(ctx, log)
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			p.report(log, stderr, ee.Err)
		}
		return ee.Code
	}
	p.report(log, stderr, err)
	return ExitFailed
}

func (p Program) validate() error {
	if p.Common != nil {
		if err := p.Common.Validate(); err != nil {
			return err
		}
	}
	if p.Validate != nil {
		return p.Validate()
	}
	return nil
}

// report logs a daemon's last error; a tool (no Common) prints it plainly.
func (p Program) report(log *slog.Logger, stderr io.Writer, err error) {
	if p.Common == nil {
		fmt.Fprintf(stderr, "%s: %v\n", p.Name, err)
		return
	}
	log.Error(p.Name+" stopped", "err", err.Error())
}
