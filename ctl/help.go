package ctl

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/pflag"
)

const globalHelp = `Global flags (every command):
  --coordinator URL[,URL...]  coordinator members (env RACKFENCE_COORDINATOR,
                              default https://127.0.0.1:7480)
  --token TOKEN               API token (env RACKFENCE_TOKEN)
  --token-file FILE           file holding the token (env RACKFENCE_TOKEN_FILE);
                              the first admin token is DATA-DIR/admin.token
  -o, --output FORMAT         table (default), json or yaml
  --timeout DURATION          bound of --wait, --follow, --watch (default 10m)
  -h, --help                  help for a command

Exit codes: 0 success, 1 operation failed, 2 usage error, 3 not found,
4 conflict or refused by fencing, 5 cannot reach the coordinator.
`

func printTopHelp(w io.Writer) {
	fmt.Fprint(w, `rackfencectl is the operator's client of a rackfence coordinator cluster.

Usage: rackfencectl COMMAND [ARGS] [FLAGS]

Commands:
`)
	paths := make([]string, 0, len(commands))
	for p := range commands {
		if !commands[p].hidden {
			paths = append(paths, p)
		}
	}
	sort.Slice(paths, func(i, j int) bool { return order(paths[i]) < order(paths[j]) })
	for _, p := range paths {
		c := commands[p]
		fmt.Fprintf(w, "  %-22s %s\n", p, c.short)
	}
	fmt.Fprint(w, "\n"+globalHelp+"\nRun 'rackfencectl COMMAND --help' for a command's flags and examples.\n")
}

// order sorts commands in the order an operator meets them.
func order(p string) string {
	first := []string{"host", "import", "detach", "attach", "resume", "drain", "restore", "reboot", "inspect", "events", "pivot", "rack", "credentials", "token", "audit", "cluster", "completion"}
	w, _, _ := strings.Cut(p, " ")
	for i, f := range first {
		if f == w {
			return fmt.Sprintf("%02d %s", i, p)
		}
	}
	return "99 " + p
}

func printGroupHelp(w io.Writer, group string, subs []string) {
	fmt.Fprintf(w, "Usage: rackfencectl %s SUBCOMMAND\n\nSubcommands:\n", group)
	width := 10
	for _, s := range subs {
		width = max(width, len(s))
	}
	for _, s := range subs {
		c := commands[group+" "+s]
		fmt.Fprintf(w, "  %-*s %s\n", width, s, c.short)
	}
	fmt.Fprintf(w, "\nRun 'rackfencectl %s SUBCOMMAND --help' for more.\n", group)
}

func printCommandHelp(w io.Writer, c *command, fs *pflag.FlagSet) {
	fmt.Fprintf(w, "%s\n\nUsage: rackfencectl %s %s\n", c.short, c.path, c.usage)
	if c.long != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(c.long))
	}
	local := pflag.NewFlagSet("", pflag.ContinueOnError)
	fs.VisitAll(func(f *pflag.Flag) {
		switch f.Name {
		case "coordinator", "token", "token-file", "output", "timeout", "help":
			return
		}
		local.AddFlag(f)
	})
	if local.HasFlags() {
		fmt.Fprintf(w, "\nFlags:\n%s", local.FlagUsages())
	}
	fmt.Fprint(w, "\n"+globalHelp)
}
