// Package ctl is rackfencectl, the operator's command-line client of the
// coordinator's HTTP API. Main runs one command line and returns the exit
// code of the contract: 0 success, 1 operation failed, 2 usage error, 3 not
// found, 4 conflict or refused by fencing, 5 cannot reach the coordinator.
//
// Every command is one small file: it registers a *command whose setup
// declares its flags and returns the function that runs it.
package ctl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/rackfence/rackfence/internal/version"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/spf13/pflag"
)

// DefaultCoordinator is used when neither --coordinator nor
// RACKFENCE_COORDINATOR is set.
const DefaultCoordinator = client.DefaultCoordinator

// IO is what a command line runs against; Main's tests replace it.
type IO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv reads the environment (os.Getenv when nil).
	Getenv func(string) string
	// IsTerminal reports whether w (Stdout, Stderr) or r (Stdin) is a
	// terminal; nil detects through golang.org/x/term on *os.File.
	IsTerminal func(f any) bool
	// Width returns the terminal width of w, 0 when unknown.
	Width func(f any) int
}

// command is one rackfencectl command.
type command struct {
	// path is the command words, e.g. "host list".
	path string
	// usage is the synopsis after the path, e.g. "[--rack R] [--state S]".
	usage string
	// short is a one-line summary; long the full --help text (optional).
	short, long string
	// hidden leaves the command out of help and completion.
	hidden bool
	// setup declares the command's flags on fs and returns its run function.
	setup func(fs *pflag.FlagSet) func(x *Ctx, args []string) error
}

var commands = map[string]*command{}

func register(c *command) { commands[c.path] = c }

// groups are the first words that need a second one ("host list").
func groups() map[string][]string {
	g := map[string][]string{}
	for p := range commands {
		if a, b, ok := strings.Cut(p, " "); ok && !commands[p].hidden {
			g[a] = append(g[a], b)
		}
	}
	for _, v := range g {
		sort.Strings(v)
	}
	return g
}

// globals are the flags every command takes.
type globals struct {
	coordinator string
	token       string
	tokenFile   string
	caFile      string
	output      string
	timeout     time.Duration
	help        bool
}

func addGlobals(fs *pflag.FlagSet, g *globals, getenv func(string) string) {
	envOr := func(k, def string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return def
	}
	fs.StringVar(&g.coordinator, "coordinator", envOr("RACKFENCE_COORDINATOR", DefaultCoordinator), "coordinator member URLs, comma-separated (env RACKFENCE_COORDINATOR)")
	fs.StringVar(&g.token, "token", "", "API token (env RACKFENCE_TOKEN); prefer --token-file, argv is visible to other users")
	fs.StringVar(&g.tokenFile, "token-file", "", "file holding the API token (env RACKFENCE_TOKEN_FILE)")
	fs.StringVar(&g.caFile, "ca-file", envOr("RACKFENCE_CA_FILE", ""), "trust this cluster CA file (a member's DATA-DIR/tls/ca.crt) for https:// (env RACKFENCE_CA_FILE; default: the CA the token pins)")
	fs.StringVarP(&g.output, "output", "o", envOr("RACKFENCE_OUTPUT", "table"), "output format: table, json or yaml")
	to := 10 * time.Minute
	if v := getenv("RACKFENCE_TIMEOUT"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			to = d
		}
	}
	fs.DurationVar(&g.timeout, "timeout", to, "how long --wait, --follow and --watch may take (env RACKFENCE_TIMEOUT)")
	fs.BoolVarP(&g.help, "help", "h", false, "show help for the command")
}

// globalTakesValue says whether a global flag (as written, without =) is
// followed by a value, for finding the command words before parsing.
func globalTakesValue(arg string) bool {
	switch arg {
	case "--coordinator", "--token", "--token-file", "--ca-file", "--output", "-o", "--timeout":
		return true
	}
	return false
}

// Main runs one command line (without the program name) and returns the
// exit code.
func Main(ctx context.Context, args []string, io IO) int {
	if io.Getenv == nil {
		io.Getenv = os.Getenv
	}
	if io.IsTerminal == nil {
		io.IsTerminal = isTerminal
	}
	if io.Width == nil {
		io.Width = termWidth
	}
	// Find the command words: the first one or two arguments that are not
	// flags (skipping global flags and their values).
	var words []string
	rest := make([]string, 0, len(args))
	g := groups()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		if strings.HasPrefix(a, "-") || !wantsWord(words, g) {
			rest = append(rest, a)
			if globalTakesValue(a) && i+1 < len(args) {
				i++
				rest = append(rest, args[i])
			}
			continue
		}
		words = append(words, a)
	}
	path := strings.Join(words, " ")
	cmd := commands[path]
	if cmd == nil {
		return topLevel(io, words, rest, g)
	}
	fs := pflag.NewFlagSet("rackfencectl "+path, pflag.ContinueOnError)
	fs.SetOutput(io.Stderr)
	fs.SortFlags = false
	var gl globals
	run := cmd.setup(fs)
	addGlobals(fs, &gl, io.Getenv)
	fs.Usage = func() {}
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			printCommandHelp(io.Stdout, cmd, fs)
			return ExitOK
		}
		return usageFail(io, cmd, err.Error())
	}
	if gl.help {
		printCommandHelp(io.Stdout, cmd, fs)
		return ExitOK
	}
	x := &Ctx{ctx: ctx, io: io, g: gl, cmd: cmd}
	if err := checkOutput(gl.output); err != nil && !(cmd.path == "host export" && gl.output == OutBMH) {
		return usageFail(io, cmd, err.Error())
	}
	err := run(x, fs.Args())
	return x.finish(err)
}

// wantsWord says whether another command word is expected.
func wantsWord(words []string, g map[string][]string) bool {
	switch len(words) {
	case 0:
		return true
	case 1:
		_, isGroup := g[words[0]]
		return isGroup
	case 2:
		// A three-word command ("cluster snapshot save").
		return len(subgroup(words)) > 0
	}
	return false
}

// subgroup lists the third words of the commands that start with the two
// given ("cluster snapshot" -> save, status).
func subgroup(words []string) []string {
	if len(words) != 2 || commands[words[0]+" "+words[1]] != nil {
		return nil
	}
	prefix := words[0] + " " + words[1] + " "
	var subs []string
	for p, c := range commands {
		if rest, ok := strings.CutPrefix(p, prefix); ok && !c.hidden {
			subs = append(subs, rest)
		}
	}
	sort.Strings(subs)
	return subs
}

// printVersion prints `rackfencectl VERSION (COMMIT, GO VERSION)`, or with
// -o json (or RACKFENCE_OUTPUT=json) one JSON object
// {name, version, commit, goVersion}, with -o yaml the same as YAML.
func printVersion(io IO, rest []string) int {
	out := io.Getenv("RACKFENCE_OUTPUT")
	for i, a := range rest {
		switch {
		case (a == "-o" || a == "--output") && i+1 < len(rest):
			out = rest[i+1]
		case strings.HasPrefix(a, "--output="):
			out = strings.TrimPrefix(a, "--output=")
		case strings.HasPrefix(a, "-o") && len(a) > 2 && a[2] != '-':
			out = strings.TrimPrefix(strings.TrimPrefix(a, "-o"), "=")
		}
	}
	info := version.Get("rackfencectl")
	switch out {
	case "json":
		fmt.Fprintln(io.Stdout, info.JSON())
	case "yaml":
		fmt.Fprintf(io.Stdout, "name: %s\nversion: %q\ncommit: %q\ngoVersion: %s\n", info.Name, info.Version, info.Commit, info.GoVersion)
	case "", "table":
		fmt.Fprintln(io.Stdout, info)
	default:
		fmt.Fprintf(io.Stderr, "error: -o %q: use table, json or yaml\n", out)
		return ExitUsage
	}
	return ExitOK
}

// topLevel handles no command, --help, version and unknown commands.
func topLevel(io IO, words, rest []string, g map[string][]string) int {
	help := false
	for _, a := range rest {
		if a == "-h" || a == "--help" {
			help = true
		}
		if a == "--version" {
			return printVersion(io, rest)
		}
	}
	switch {
	case len(words) == 0:
		printTopHelp(io.Stdout)
		if help {
			return ExitOK
		}
		return ExitUsage
	case len(words) == 1 && words[0] == "help":
		printTopHelp(io.Stdout)
		return ExitOK
	case len(words) == 1 && words[0] == "version":
		return printVersion(io, rest)
	}
	if subs := subgroup(words); len(subs) > 0 {
		group := strings.Join(words, " ")
		if help {
			printGroupHelp(io.Stdout, group, subs)
			return ExitOK
		}
		fmt.Fprintf(io.Stderr, "error: %q needs a subcommand: %s\n", group, strings.Join(subs, ", "))
		fmt.Fprintf(io.Stderr, "Run 'rackfencectl %s --help' for usage.\n", group)
		return ExitUsage
	}
	if subs, ok := g[words[0]]; ok {
		if len(words) == 1 && help {
			printGroupHelp(io.Stdout, words[0], subs)
			return ExitOK
		}
		what := "a subcommand"
		if len(words) > 1 {
			what = fmt.Sprintf("a known subcommand (not %q)", words[1])
		}
		fmt.Fprintf(io.Stderr, "error: %q needs %s: %s\n", words[0], what, strings.Join(subs, ", "))
		fmt.Fprintf(io.Stderr, "Run 'rackfencectl %s --help' for usage.\n", words[0])
		return ExitUsage
	}
	fmt.Fprintf(io.Stderr, "error: unknown command %q\nRun 'rackfencectl --help' for the list of commands.\n", words[0])
	return ExitUsage
}
