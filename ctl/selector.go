package ctl

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// selectorHelp is the -l syntax, for the --help of every command taking it.
const selectorHelp = `-l SELECTOR picks hosts by their labels (Kubernetes syntax): key=value
(or ==), key!=value (also hosts without the key), key (has it), !key (has
it not), key in (v1,v2), key notin (v1,v2); commas mean AND. Quote it for
the shell: -l 'zone in (a,b),!gpu'.`

// bulkHelp says how the bulk commands treat -l.
const bulkHelp = selectorHelp + `
With -l the matching hosts are listed first; when more than one matches,
the command asks before acting (on a terminal) or needs --yes (exit 2
without it). --rack R with -l narrows to that rack.`

// selection is -l and --yes of a bulk command.
type selection struct {
	sel *string
	yes *bool
}

func addSelection(fs *pflag.FlagSet) selection {
	return selection{
		sel: fs.StringP("selector", "l", "", "act on every host whose labels match (e.g. role=compute,zone!=a)"),
		yes: fs.Bool("yes", false, "act on every host -l matches without asking (required when several match and stdin is not a terminal)"),
	}
}

// checkSelector checks -l before any request (a bad one is a usage error).
func checkSelector(sel string) error {
	if _, err := wire.ParseSelector(sel); err != nil {
		return usagef("-l %v", err)
	}
	return nil
}

// selectHosts lists the hosts -l (and --rack, when given) picks; none is
// exit 3.
func (x *Ctx) selectHosts(cl *client.Client, rack, sel string) ([]wire.Host, error) {
	l, err := cl.ListHosts(x.ctx, client.HostFilter{Rack: rack, Selector: sel})
	if err != nil {
		return nil, err
	}
	if len(l.Items) == 0 {
		where := ""
		if rack != "" {
			where = " in rack " + rack
		}
		return nil, &failure{code: ExitNotFound, err: fmt.Errorf("no host%s matches -l %s", where, sel),
			hints: []string{"'rackfencectl host list --show-labels' shows the hosts' labels"}}
	}
	sortHosts(l.Items)
	return l.Items, nil
}

// confirm prints the hosts a bulk command is about to act on and, when
// there are several, asks (on a terminal) or requires --yes (otherwise:
// exit 2, nothing sent).
func (x *Ctx) confirm(verb, sel string, hosts []wire.Host, yes bool) error {
	w := x.io.Stdout
	if x.structured() {
		w = x.io.Stderr
	}
	fmt.Fprintf(w, "%s: %d host(s) match -l %s:\n", verb, len(hosts), sel)
	t := &table{header: []string{"NAME", "RACK", "STATE", "STATUS", "LABELS"}}
	for i := range hosts {
		h := &hosts[i]
		t.add(h.Name, h.Rack, hostState(h), hostOpStatus(h), wire.FormatLabels(h.Labels))
	}
	t.write(indent{w}, 0)
	if len(hosts) <= 1 || yes {
		return nil
	}
	if !x.io.IsTerminal(x.io.Stdin) {
		return usagef("%d hosts match -l %s and standard input is not a terminal to ask: add --yes to %s all of them (nothing was sent)", len(hosts), sel, verb)
	}
	fmt.Fprintf(x.io.Stderr, "%s these %d hosts? [y/N] ", verb, len(hosts))
	line, _ := bufio.NewReader(x.io.Stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return &failure{code: ExitFailed, err: fmt.Errorf("%s not confirmed: nothing was sent", verb),
		hints: []string{"answer y, or add --yes to act without asking"}}
}

// indent writes every line two spaces in.
type indent struct{ w io.Writer }

func (i indent) Write(p []byte) (int, error) {
	s := "  " + strings.ReplaceAll(strings.TrimSuffix(string(p), "\n"), "\n", "\n  ") + "\n"
	if _, err := io.WriteString(i.w, s); err != nil {
		return 0, err
	}
	return len(p), nil
}
