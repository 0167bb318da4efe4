package ctl

import (
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/ctl/importer"
	"github.com/rackfence/rackfence/shared/wire"
)

func init() {
	register(&command{
		path:  "import ironic",
		usage: "--ironic-url URL [--ironic-token-file F] [--ironic-ca-file F] (--rack-from properties.KEY|extra.KEY | --rack R) [--credentials-file F] [--allow-missing-credentials] [--page-size N] [--dry-run]",
		short: "Take over an OpenStack Ironic inventory (only reads Ironic)",
		long: `Reads every node and port of an Ironic (GET requests only, one per page)
and creates or updates a rackfence host per node, with a credentials record
NAME-bmc for its BMC login:
  active                          -> externally provisioned (adopted, never redeployed)
  available, manageable, enroll   -> registered hosts
  any other state                 -> skipped, listed with its state
Drivers redfish and ipmi map to redfish://, redfish+http:// and ipmi://
addresses; any other driver is refused by name. Ironic masks passwords, so
they come from --credentials-file, keyed by node name, node UUID or BMC
address:
  node-1: {username: admin, password: s3cret}
  "https://10.1.0.7": {password: calvin}     # username from driver_info
A node without an entry (and no existing record NAME-bmc) is refused, unless
--allow-missing-credentials. A refused node means nothing is applied;
--dry-run prints the plan (-o json for a program). Running it again is
idempotent. The mapping is in docs/operator.md, "Coming from Ironic".
  rackfencectl import ironic --ironic-url http://ironic:6385 --rack-from extra.rack \
      --credentials-file bmc.yaml --dry-run`,
		setup: importIronic,
	})
}

func importIronic(fs *pflag.FlagSet) func(*Ctx, []string) error {
	ironicURL := fs.String("ironic-url", "", "Ironic's API endpoint, e.g. http://ironic:6385 (required)")
	tokenFile := fs.String("ironic-token-file", "", "file holding a Keystone token, sent as X-Auth-Token (none: noauth)")
	caFile := fs.String("ironic-ca-file", "", "PEM file of the CA certificate(s) that signed an https:// Ironic's certificate (default: the system's CAs)")
	rack := fs.String("rack", "", "the rack of every host (with --rack-from: of nodes that lack the property)")
	rackFrom := fs.String("rack-from", "", "take the rack from the node's properties.KEY or extra.KEY")
	credsFile := fs.String("credentials-file", "", "YAML or JSON file of BMC logins keyed by node name, UUID or BMC address")
	allowMissing := fs.Bool("allow-missing-credentials", false, "create hosts with no credentials entry; they wait for 'rackfencectl credentials set NAME-bmc'")
	pageSize := fs.Int("page-size", 0, "nodes (and ports) per Ironic request; 0: Ironic's [api]max_limit (1000 by default)")
	dryRun := fs.Bool("dry-run", false, "print the plan (created, changed, unchanged, refused, skipped) and change nothing")
	return func(x *Ctx, args []string) error {
		if len(args) > 0 {
			return usagef("import ironic takes no arguments (got %q)", args)
		}
		if *ironicURL == "" {
			return usagef("--ironic-url is required (Ironic's API endpoint, e.g. http://ironic:6385)")
		}
		if !strings.HasPrefix(*ironicURL, "http://") && !strings.HasPrefix(*ironicURL, "https://") {
			return usagef("--ironic-url %q: give an http:// or https:// URL", *ironicURL)
		}
		if *pageSize < 0 {
			return usagef("--page-size %d: give a positive number of nodes per request, or 0 for Ironic's maximum", *pageSize)
		}
		o := importer.IronicOptions{Rack: *rack, RackFrom: *rackFrom}
		if o.Rack != "" {
			if err := wire.ValidateName("--rack", o.Rack); err != nil {
				return usagef("%v", err)
			}
		}
		if o.RackFrom != "" {
			root, key, ok := strings.Cut(o.RackFrom, ".")
			if !ok || (root != "properties" && root != "extra") || key == "" {
				return usagef("--rack-from %q: use properties.KEY or extra.KEY", o.RackFrom)
			}
		}
		if o.Rack == "" && o.RackFrom == "" {
			return usagef("give --rack R or --rack-from properties.KEY|extra.KEY")
		}
		token := ""
		if *tokenFile != "" {
			b, err := os.ReadFile(*tokenFile)
			if err != nil {
				return usagef("--ironic-token-file: %v", err)
			}
			token = strings.TrimSpace(string(b))
			if token == "" {
				return usagef("--ironic-token-file %s is empty", *tokenFile)
			}
		}
		var cas *x509.CertPool
		if *caFile != "" {
			if !strings.HasPrefix(*ironicURL, "https://") {
				return usagef("--ironic-ca-file is for an https:// --ironic-url (got %q)", *ironicURL)
			}
			pem, err := os.ReadFile(*caFile)
			if err != nil {
				return usagef("--ironic-ca-file: %v", err)
			}
			cas = x509.NewCertPool()
			if !cas.AppendCertsFromPEM(pem) {
				return usagef("--ironic-ca-file %s holds no PEM certificate", *caFile)
			}
		}
		if *credsFile != "" {
			data, name, err := readInputFile(x, *credsFile)
			if err != nil {
				return err
			}
			if o.Creds, err = importer.ParseIronicCreds(data); err != nil {
				return usagef("--credentials-file %s: %v", name, err)
			}
		}
		inv, err := importer.ReadIronic(x.ctx, *ironicURL, token, *pageSize, cas)
		if ie := (*importer.IronicError)(nil); errors.As(err, &ie) {
			return withHints(&failure{code: ExitFailed, err: ie.Err}, ie.Hint)
		}
		if err != nil {
			return err
		}
		in, skipped := importer.ConvertIronic(inv.Nodes, inv.Ports, o)
		in.Notes = append([]string{fmt.Sprintf("read %d nodes and %d ports from Ironic in %d GET requests", len(inv.Nodes), len(inv.Ports), inv.Calls)}, in.Notes...)
		cl, err := x.Client()
		if err != nil {
			return err
		}
		p, err := x.planBMH(cl, in, *allowMissing)
		if err != nil {
			return err
		}
		p.Skipped = skipped
		p.DryRun = *dryRun
		return x.applyPlan(p, "Ironic node(s)", "fix the refused nodes (see 'refused:' above; --credentials-file for missing logins) and run again; --dry-run shows the plan")
	}
}
