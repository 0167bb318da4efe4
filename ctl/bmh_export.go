package ctl

import (
	"fmt"
	"io"
	"sort"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/rackfence/rackfence/ctl/importer"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

func init() {
	register(&command{
		path:  "host export",
		usage: "-o bmh [-l SELECTOR] [--namespace NS] [--include-secrets]",
		short: "Write hosts as metal3 BareMetalHost and Secret documents",
		long: `Writes one BareMetalHost (metal3.io/v1alpha1) per host and one Secret (v1)
per credentials record the hosts name, as YAML documents separated by '---',
for baremetal-operator or for 'host apply' on another cluster. The rack is
the annotation ` + importer.AnnRack + `, which 'host apply' reads back when given
neither --rack nor --rack-from.

Without --include-secrets each Secret carries the username only and the
annotation ` + importer.AnnWithheld + ` listing what was left out: fill in password
(and the data keys) before giving the Secrets to baremetal-operator.
'host apply' leaves the record of a withheld Secret as it is (and refuses a
host whose record is missing, unless --allow-missing-secrets).

--include-secrets writes the passwords and data values too (admin token
only; every record revealed is in the coordinator's audit trail): keep the
output as secret as the records.

Examples:
  rackfencectl host export -o bmh > fleet.yaml
  rackfencectl host export -o bmh -l role=compute --namespace metal3`,
		setup: hostExport,
	})
}

func hostExport(fs *pflag.FlagSet) func(*Ctx, []string) error {
	sel := fs.StringP("selector", "l", "", "only hosts whose labels match (e.g. role=compute,zone!=a)")
	ns := fs.String("namespace", "", "metadata.namespace of every document (empty: none, kubectl applies the current namespace)")
	include := fs.Bool("include-secrets", false, "write passwords and data values into the Secrets (admin only, audited)")
	return func(x *Ctx, args []string) error {
		if len(args) > 0 {
			return usagef("host export takes no arguments (got %q); select hosts with -l", args)
		}
		if x.g.output != OutBMH {
			return usagef("host export needs -o bmh (BareMetalHost documents)")
		}
		if err := checkSelector(*sel); err != nil {
			return err
		}
		if *ns != "" {
			if err := wire.ValidateName("--namespace", *ns); err != nil {
				return usagef("%v", err)
			}
		}
		cl, err := x.Client()
		if err != nil {
			return err
		}
		l, err := cl.ListHosts(x.ctx, client.HostFilter{Selector: *sel})
		if err != nil {
			return err
		}
		sortHosts(l.Items)
		records := map[string]bool{}
		var docs []any
		for _, h := range l.Items {
			d, refs := importer.ExportBMH(h, *ns)
			docs = append(docs, d)
			for _, x := range importer.ExportDayTwo(h, *ns) {
				docs = append(docs, x)
			}
			for _, r := range refs {
				records[r] = true
			}
		}
		names := make([]string, 0, len(records))
		for n := range records {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			var cr *wire.Credentials
			if *include {
				cr, err = cl.RevealCredentials(x.ctx, n)
				if client.IsForbidden(err) {
					return withHints(err, "--include-secrets needs an admin token; without it the Secrets carry the usernames only")
				}
			} else {
				cr, err = cl.GetCredentials(x.ctx, n)
			}
			if client.IsNotFound(err) {
				fmt.Fprintf(x.io.Stderr, "warning: credentials record %s does not exist; no Secret written for it\n", n)
				continue
			}
			if err != nil {
				return err
			}
			if *include {
				docs = append(docs, importer.RevealedSecret(cr, n, *ns))
			} else {
				docs = append(docs, importer.ExportSecret(cr, n, *ns))
			}
		}
		return writeDocs(x.io.Stdout, docs)
	}
}

func writeDocs(w io.Writer, docs []any) error {
	for _, d := range docs {
		y, err := yaml.Marshal(d)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "---\n%s", y)
	}
	return nil
}
