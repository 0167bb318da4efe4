package ctl

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/rackfence/rackfence/ctl/importer"
	"github.com/rackfence/rackfence/shared/wire"
)

// metal3Opts are host apply's flags for BareMetalHost input.
type metal3Opts struct {
	rack, rackFrom  *string
	dryRun          *bool
	allowMissing    *bool
	namespacePrefix *bool
}

func metal3Flags(fs *pflag.FlagSet) metal3Opts {
	return metal3Opts{
		rack:            fs.String("rack", "", "BareMetalHost input: the rack of every host (the fallback of --rack-from)"),
		rackFrom:        fs.String("rack-from", "", "BareMetalHost input: take the rack from label:KEY or annotation:KEY"),
		dryRun:          fs.Bool("dry-run", false, "BareMetalHost input: print the plan (created, changed, unchanged, refused) and change nothing"),
		allowMissing:    fs.Bool("allow-missing-secrets", false, "BareMetalHost input: create hosts whose Secret is missing; they wait for the credentials record"),
		namespacePrefix: fs.Bool("namespace-prefix", false, "BareMetalHost input: name records NAMESPACE-SECRET (needed when namespaces share Secret names)"),
	}
}

// applyMetal3 handles host apply when the files hold Kubernetes documents
// (BareMetalHost, Secret). done is false for plain rackfence host files.
func (x *Ctx) applyMetal3(inputs []inputFile, f metal3Opts) (done bool, err error) {
	var objs []importer.Object
	plain := ""
	var files []string
	for _, in := range inputs {
		name := in.name
		files = append(files, name)
		os, err := importer.SplitObjects(in.data)
		if err != nil {
			if importer.HasKinds(objs) {
				return true, usagef("%s: %v", name, err)
			}
			plain = name
			continue
		}
		if !importer.HasKinds(os) {
			plain = name
			continue
		}
		for i := range os {
			os[i].Where = name + ": " + os[i].Where
		}
		objs = append(objs, os...)
	}
	if len(objs) == 0 {
		if *f.rack != "" || *f.rackFrom != "" || *f.dryRun || *f.allowMissing || *f.namespacePrefix {
			return true, usagef("--rack, --rack-from, --dry-run, --allow-missing-secrets and --namespace-prefix are for BareMetalHost input; %s holds rackfence hosts", strings.Join(files, ", "))
		}
		return false, nil
	}
	if plain != "" {
		return true, usagef("%s holds rackfence hosts and other files hold BareMetalHost documents; apply them separately", plain)
	}
	o := importer.BMHOptions{Rack: *f.rack, RackFrom: *f.rackFrom, NamespacePrefix: *f.namespacePrefix}
	if o.Rack != "" {
		if err := wire.ValidateName("--rack", o.Rack); err != nil {
			return true, usagef("%v", err)
		}
	}
	if o.RackFrom != "" {
		src, key, ok := strings.Cut(o.RackFrom, ":")
		if !ok || (src != "label" && src != "annotation") || key == "" {
			return true, usagef("--rack-from %q: use label:KEY or annotation:KEY", o.RackFrom)
		}
	}
	in, err := importer.ConvertBMH(objs, o)
	if err != nil {
		return true, usagef("%v", err)
	}
	if len(in.Hosts) == 0 && len(in.Refused) == 0 {
		return true, usagef("no BareMetalHost found in %s", strings.Join(files, ", "))
	}
	cl, err := x.Client()
	if err != nil {
		return true, err
	}
	p, err := x.planBMH(cl, in, *f.allowMissing)
	if err != nil {
		return true, err
	}
	p.DryRun = *f.dryRun
	return true, x.applyPlan(p, "BareMetalHost(s)", "fix or remove the refused documents (see 'refused:' above) and run again; --dry-run shows the plan")
}
