package ctl

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// Annotations host export writes (and host apply reads back).
const (
	// annRack carries the host's rack; host apply reads it without --rack/--rack-from.
	annRack = "rackfence.io/rack"
	// annWithheld marks a Secret whose password and data values were not
	// exported; host apply does not write such a Secret's record.
	annWithheld = "rackfence.io/withheld"
)

func init() {
	register(&command{
		path:  "host export",
		usage: "-o bmh [-l SELECTOR] [--namespace NS] [--include-secrets]",
		short: "Write hosts as metal3 BareMetalHost and Secret documents",
		long: `Writes one BareMetalHost (metal3.io/v1alpha1) per host and one Secret (v1)
per credentials record the hosts name, as YAML documents separated by '---',
for baremetal-operator or for 'host apply' on another cluster. The rack is
the annotation ` + annRack + `, which 'host apply' reads back when given
neither --rack nor --rack-from.

Without --include-secrets each Secret carries the username only and the
annotation ` + annWithheld + ` listing what was left out: fill in password
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
			d, refs := exportBMH(h, *ns)
			docs = append(docs, d)
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
				docs = append(docs, revealedSecret(cr, n, *ns))
			} else {
				docs = append(docs, exportSecret(cr, n, *ns))
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

// exportedBMH is a BareMetalHost as export writes it (no status).
type exportedBMH struct {
	APIVersion string  `json:"apiVersion"`
	Kind       string  `json:"kind"`
	Metadata   k8sMeta `json:"metadata"`
	Spec       bmhSpec `json:"spec"`
}

// exportBMH is mapBMH's inverse; refs are the records the host names.
func exportBMH(h wire.Host, ns string) (exportedBMH, []string) {
	d := exportedBMH{APIVersion: "metal3.io/v1alpha1", Kind: "BareMetalHost",
		Metadata: k8sMeta{Name: h.Name, Namespace: ns, Labels: h.Labels, Annotations: map[string]string{annRack: h.Rack}}}
	s := &d.Spec
	s.BMC = bmhBMC{Address: h.BMC.Address, CredentialsName: h.BMC.Credentials, DisableCertificateVerification: h.BMC.DisableCertificateVerification}
	s.BootMACAddress, s.Online, s.ExternallyProvisioned = h.BootMACAddress, h.Online, h.ExternallyProvisioned
	if i := h.Image; i != nil {
		s.Image = &bmhImage{URL: i.URL, Checksum: i.Checksum, ChecksumType: i.ChecksumType, DiskFormat: i.Format}
	}
	if r := h.RootDeviceHints; r != nil {
		s.RootDeviceHints = &bmhRootDeviceHints{DeviceName: r.DeviceName, HCTL: r.HCTL, Model: r.Model, Vendor: r.Vendor,
			SerialNumber: r.SerialNumber, MinSizeGigabytes: r.MinSizeGigabytes, WWN: r.WWN, WWNWithExtension: r.WWNWithExtension,
			WWNVendorExtension: r.WWNVendorExtension, Rotational: r.Rotational}
	}
	s.BootMode, s.AutomatedCleaningMode = h.BootMode, h.AutomatedCleaningMode
	var refs []string
	if h.BMC.Credentials != "" {
		refs = append(refs, h.BMC.Credentials)
	}
	ref := func(r *wire.SecretReference) *secretRef {
		if r == nil {
			return nil
		}
		refs = append(refs, r.Name)
		return &secretRef{Name: r.Name, Namespace: ns}
	}
	s.UserData, s.NetworkData, s.MetaData = ref(h.UserData), ref(h.NetworkData), ref(h.MetaData)
	if r := ref(h.PreprovisioningNetworkData); r != nil {
		s.PreprovisioningNetworkDataName = r.Name
	}
	if h.Consumer != "" {
		// mapBMH writes Kind/namespace/name; anything else is a name.
		if p := strings.Split(h.Consumer, "/"); len(p) == 3 && p[0] != "" && p[2] != "" {
			s.ConsumerRef = &objectRef{Kind: p[0], Namespace: p[1], Name: p[2]}
		} else {
			s.ConsumerRef = &objectRef{Name: h.Consumer}
		}
	}
	if in := h.Intents; in != nil {
		if in.Detach != nil {
			d.Metadata.Annotations[annDetached] = ""
		}
		for req, it := range in.PowerOff {
			_ = it
			d.Metadata.Annotations[annReboot+"/"+req] = ""
		}
	}
	return d, refs
}

// exportSecret writes a record's username; the password and data values
// are withheld (the coordinator does not reveal them to the CLI).
func exportSecret(cr *wire.Credentials, name, ns string) secretDoc {
	s := secretDoc{APIVersion: "v1", Kind: "Secret", Type: "Opaque",
		Metadata: k8sMeta{Name: name, Namespace: ns}}
	var withheld []string
	if cr.Username != "" {
		s.StringData = map[string]string{"username": cr.Username}
		withheld = append(withheld, "password")
	}
	withheld = append(withheld, cr.DataKeys...)
	if len(withheld) > 0 {
		s.Metadata.Annotations = map[string]string{annWithheld: strings.Join(withheld, ",")}
	}
	return s
}

// revealedSecret writes a revealed record whole: username, password and
// data keys as the Secret's (base64) data.
func revealedSecret(cr *wire.Credentials, name, ns string) secretDoc {
	s := secretDoc{APIVersion: "v1", Kind: "Secret", Type: "Opaque",
		Metadata: k8sMeta{Name: name, Namespace: ns}, Data: map[string][]byte{}}
	if cr.Username != "" {
		s.Data["username"] = []byte(cr.Username)
		s.Data["password"] = []byte(cr.Password)
	}
	for k, v := range cr.Data {
		s.Data[k] = []byte(v)
	}
	return s
}
