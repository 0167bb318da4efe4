package ctl

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

func init() {
	register(&command{
		path:  "host list",
		usage: "[--rack R] [--state S] [--status S] [--error TYPE|any] [--health H|unhealthy] [--intents-pending] [-l SELECTOR] [--show-labels] [--chunk-size N] [--watch [--interval D]]",
		short: "List hosts with their state, status, intents and error",
		long: `Columns: STATE is the provisioning state, STATUS the operational status,
INTENTS the operator's standing requests (a * marks one the rack's lease
holder has not acknowledged yet), ERROR the error type and count;
--show-labels adds LABELS. Every value a column shows is a filter:
--state (including pending: no report yet), --status, --error (a type, or
"any") and --intents-pending (a * in INTENTS); --health filters on the
hardware health the hosts' BMCs report (OK, Warning, Critical, Unknown, or
unhealthy: any but OK; hosts not read yet never match); filters combine
with AND.

` + selectorHelp + `

The list is read --chunk-size hosts a request (default 500), every page at
the first page's Raft index, so it is one consistent view; table rows print
as each page arrives (the table asks only for what it shows), -o json
streams one valid document of whole hosts. --chunk-size 0 reads the whole
list in one answer.

--watch redraws the list (and the racks' lease holders) every --interval
until Ctrl-C or --timeout (0: no limit); when not on a terminal it prints the
list again only when it changed.

Examples:
  rackfencectl host list --rack r1
  rackfencectl host list --state available -o json
  rackfencectl host list --status error --error "power management error"
  rackfencectl host list --state pending --intents-pending
  rackfencectl host list --health unhealthy
  rackfencectl host list -l 'role=compute,zone in (a,b)' --show-labels`,
		setup: hostList,
	})
	register(&command{
		path:  "host get",
		usage: "NAME",
		short: "Show one host: spec, reported status, intents",
		long: `-o yaml or -o json print exactly the API's object; it can be applied back
unchanged:
  rackfencectl host get r1-h07 -o yaml | rackfencectl host apply -f -`,
		setup: hostGet,
	})
	register(&command{
		path:  "host apply",
		usage: "-f FILE [-f FILE...] [--rack R|--rack-from label:KEY|annotation:KEY] [--dry-run] [--allow-missing-secrets] [--namespace-prefix]",
		short: "Create or update hosts from YAML or JSON (one or many; also metal3 BareMetalHosts)",
		long: `FILE holds one host, several YAML documents separated by '---', a JSON
array, or a list object {"items": [...]}; '-' reads standard input. Every
host is checked before anything is sent (a bad file exits 2). Read-only
fields (status, intents, indexes) are ignored, so 'host get -o yaml' output
applies unchanged.

Example host:
  name: r1-h07
  rack: r1
  bmc: {address: "redfish+http://10.1.0.7/redfish/v1/Systems/1", credentials: r1-bmc}
  bootMACAddress: "52:54:00:00:01:07"
  online: true
  labels: {role: compute, zone: a}

Labels follow Kubernetes' rules: a key is [prefix/]name (prefix a DNS
subdomain, name 1-63 letters, digits, '-', '_', '.', starting and ending
with a letter or digit); a value is empty or like a name. Changing only
labels does not make the rack agent act.

metal3 input: FILE may instead hold BareMetalHost (metal3.io/v1alpha1) and
Secret (v1) documents, as 'kubectl get bmh,secret -o yaml' prints them.
Every spec field is mapped or refused by name, Secrets become credentials
records, annotations become intents; a refused host means nothing is
applied. The rack comes from --rack or --rack-from; --dry-run prints the
plan. The mapping is in docs/operator.md, "Coming from metal3".
  kubectl get bmh,secret -n metal3 -o yaml > fleet.yaml
  rackfencectl host apply -f fleet.yaml --rack-from label:rack --dry-run`,
		setup: hostApply,
	})
	register(&command{
		path:  "host delete",
		usage: "NAME [--wait] [--force]",
		short: "Delete a host (the rack agent deprovisions it first)",
		long: `A host the rack agent manages is deprovisioned and removed by the agent:
the answer is "deletion requested" and --wait blocks until the record is
gone. A detached or never-registered host is removed at once.

While the host's BMC runs a recorded task (a firmware update, BIOS
settings, a RAID job or a disk erase: the host's task in 'rackfencectl
get'), the deletion is refused (exit 4, bmc_task_running) naming the
task's kind and component: wait for it to end. --force deletes anyway:
the agent still holds power until the task ended, but nothing follows it
once the host is gone, and a board deleted mid-flash can be left with
half-written firmware (a RAID job with half-built volumes, an erase with
a half-erased disk).`,
		setup: hostDelete,
	})
}

func hostList(fs *pflag.FlagSet) func(*Ctx, []string) error {
	rack := fs.String("rack", "", "only hosts of this rack")
	lf := listFilterFlags(fs)
	watch := fs.Bool("watch", false, "redraw until Ctrl-C or --timeout")
	interval := fs.Duration("interval", defaultInterval, "refresh interval of --watch")
	sel := fs.StringP("selector", "l", "", "only hosts whose labels match (e.g. role=compute,zone!=a)")
	showLabels := fs.Bool("show-labels", false, "add a LABELS column")
	chunk := fs.Int("chunk-size", wire.DefaultPageSize, "hosts asked per request; rows print as each page arrives (0: the whole list in one answer)")
	return func(x *Ctx, args []string) error {
		if len(args) > 0 {
			return usagef("host list takes no arguments (got %q); filter with --rack, --state, --status, --error or -l", args)
		}
		if *rack != "" {
			if err := wire.ValidateName("--rack", *rack); err != nil {
				return usagef("%v", err)
			}
		}
		if err := lf.check(); err != nil {
			return err
		}
		if *interval <= 0 {
			return usagef("--interval must be positive")
		}
		if err := checkSelector(*sel); err != nil {
			return err
		}
		if err := checkChunkSize(*chunk); err != nil {
			return err
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		f := client.HostFilter{Rack: *rack, Selector: *sel}
		lf.apply(&f)
		if *watch {
			return x.watchHosts(cl, f, lf, *interval, *showLabels)
		}
		if *chunk > 0 {
			return x.listHostsPaged(cl, f, lf, *chunk, *showLabels)
		}
		l, err := cl.ListHosts(x.ctx, f)
		if err != nil {
			return err
		}
		l.Items = lf.keep(l.Items)
		sortHosts(l.Items)
		return x.print(l, func(w io.Writer) { hostTable(w, l.Items, x.tableWidth(), *showLabels) })
	}
}

func hostGet(fs *pflag.FlagSet) func(*Ctx, []string) error {
	return func(x *Ctx, args []string) error {
		name, err := oneName(args, "host get NAME")
		if err != nil {
			return err
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		h, err := cl.GetHost(x.ctx, name)
		if err != nil {
			return notFoundHint(err, name)
		}
		return x.print(h, func(w io.Writer) { hostDetail(w, h) })
	}
}

func hostApply(fs *pflag.FlagSet) func(*Ctx, []string) error {
	files := fs.StringArrayP("filename", "f", nil, "YAML or JSON file of hosts; '-' for standard input (repeatable)")
	m3 := metal3Flags(fs)
	return func(x *Ctx, args []string) error {
		if len(args) > 0 {
			return usagef("host apply takes files with -f, not arguments (got %q)", args)
		}
		if len(*files) == 0 {
			return usagef("-f FILE is required ('-' reads standard input)")
		}
		var inputs []inputFile
		for _, f := range *files {
			data, name, err := readInputFile(x, f)
			if err != nil {
				return err
			}
			inputs = append(inputs, inputFile{name, data})
		}
		if done, err := x.applyMetal3(inputs, m3); done {
			return err
		}
		var hosts []wire.Host
		for _, in := range inputs {
			hs, err := parseHostFile(x, in)
			if err != nil {
				return err
			}
			hosts = append(hosts, hs...)
		}
		if len(hosts) == 0 {
			return usagef("no hosts found in %s", strings.Join(*files, ", "))
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		var stored []wire.Host
		var firstErr error
		failed := 0
		for i := range hosts {
			h := specOnly(hosts[i])
			out, created, err := cl.ApplyHost(x.ctx, &h)
			if err != nil {
				if client.IsUnreachable(err) {
					return err
				}
				failed++
				fmt.Fprintf(x.io.Stderr, "host/%s: %v\n", h.Name, err)
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			stored = append(stored, *out)
			if !x.structured() {
				verb := "configured"
				if created {
					verb = "created"
				}
				fmt.Fprintf(x.io.Stdout, "host/%s %s\n", h.Name, verb)
			}
		}
		if x.structured() {
			var v any = wire.List[wire.Host]{Items: stored}
			if len(hosts) == 1 && len(stored) == 1 {
				v = stored[0]
			}
			if err := x.print(v, nil); err != nil {
				return err
			}
		}
		if firstErr != nil {
			return withHints(fmt.Errorf("%d of %d hosts not applied; first error: %w", failed, len(hosts), firstErr))
		}
		return nil
	}
}

// specOnly drops the fields PUT ignores.
func specOnly(h wire.Host) wire.Host {
	h.Status, h.Intents, h.Task = nil, nil, nil
	h.CreatedIndex, h.ModifiedIndex, h.SpecIndex = 0, 0, 0
	h.DeletionRequested, h.PivotedTo = false, ""
	return h
}

func hostDelete(fs *pflag.FlagSet) func(*Ctx, []string) error {
	wait := fs.Bool("wait", false, "block until the host record is gone (bounded by --timeout)")
	force := fs.Bool("force", false, "delete even while the host's BMC runs a firmware update (risks half-written firmware)")
	return func(x *Ctx, args []string) error {
		name, err := oneName(args, "host delete NAME")
		if err != nil {
			return err
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		var before *wire.Host
		if *wait {
			if before, err = cl.GetHost(x.ctx, name); err != nil {
				return notFoundHint(err, name)
			}
		}
		del := cl.DeleteHost
		if *force {
			del = func(ctx context.Context, name string) (bool, error) { return cl.DeleteHostForce(ctx, name, true) }
		}
		done, err := del(x.ctx, name)
		if err != nil {
			return x.conflictHint(notFoundHint(err, name), name)
		}
		if done {
			fmt.Fprintf(x.io.Stdout, "host/%s deleted\n", name)
			return nil
		}
		fmt.Fprintf(x.io.Stdout, "host/%s deletion requested; the rack agent deprovisions and removes it\n", name)
		if !*wait {
			return nil
		}
		return x.wait(cl, goalDeleted, map[string]*wire.Host{name: before}, "")
	}
}

// oneName checks that args is exactly one valid name.
func oneName(args []string, usage string) (string, error) {
	if len(args) != 1 {
		return "", usagef("expected exactly one NAME (%s), got %d arguments", usage, len(args))
	}
	if err := wire.ValidateName("NAME", args[0]); err != nil {
		return "", usagef("%v", err)
	}
	return args[0], nil
}

func notFoundHint(err error, name string) error {
	if client.IsNotFound(err) {
		return withHints(err, fmt.Sprintf("no host %q here; 'rackfencectl host list' shows the hosts this coordinator knows", name))
	}
	return err
}
