package importer

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/rackfence/rackfence/shared/wire"
)

// metal3 annotations host apply reads (BMO's names).
const (
	AnnDetached = "baremetalhost.metal3.io/detached"
	AnnPaused   = "baremetalhost.metal3.io/paused"
	AnnReboot   = "reboot.metal3.io"
	AnnInspect  = "inspect.metal3.io"
	// AnnStatus holds a copy of the status, which BMO restores from it
	// when a host moved between clusters arrives without one.
	AnnStatus          = "baremetalhost.metal3.io/status"
	AnnHardwareDetails = "inspect.metal3.io/hardwaredetails"
)

// BMHOptions are host apply's flags for metal3 documents.
type BMHOptions struct {
	Rack            string // --rack
	RackFrom        string // --rack-from label:KEY | annotation:KEY
	NamespacePrefix bool   // --namespace-prefix: records named NAMESPACE-SECRET
}

// Object is one decoded document (or List item) with where it was.
type Object struct {
	Where string
	js    []byte
	kind  string
	api   string
}

// PlannedHost is one BareMetalHost turned into a rackfence host and the
// intents its annotations ask for.
type PlannedHost struct {
	Source   string               `json:"source"`
	Host     wire.Host            `json:"host"`
	Detach   bool                 `json:"detach,omitempty"`
	Reboot   *wire.RebootRequest  `json:"reboot,omitempty"`
	PowerOff []wire.RebootRequest `json:"powerOff,omitempty"`
	Inspect  bool                 `json:"inspect,omitempty"`
	Secrets  []string             `json:"-"` // record names it references
	notes    []string
}

// Input is what a set of metal3 documents asks for, before any call.
type Input struct {
	Hosts   []PlannedHost
	Records map[string]wire.Credentials // from Secrets a host references
	Refused []string                    // "WHERE: why"
	// refusedFrom holds the sources (hosts, nodes) Refused names.
	refusedFrom map[string]bool
	Notes       []string // dropped fields, ignored Secrets
	// MissingWhy says why a host whose records are missing is refused
	// (nil: the metal3 words, naming Secrets).
	MissingWhy func(records []string) string
}

// refuse records why a source (one host or node) is refused.
func (in *Input) refuse(source string, whys ...string) {
	if in.refusedFrom == nil {
		in.refusedFrom = map[string]bool{}
	}
	in.refusedFrom[source] = true
	for _, w := range whys {
		in.Refused = append(in.Refused, source+": "+w)
	}
}

// RefusedSources returns the sources (hosts, nodes) with at least one
// refusal: a host refused for three reasons is one.
func (in *Input) RefusedSources() []string {
	out := make([]string, 0, len(in.refusedFrom))
	for s := range in.refusedFrom {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// SplitObjects splits a file into objects: YAML documents, a JSON array,
// a List's items.
func SplitObjects(data []byte) ([]Object, error) {
	var out []Object
	docs := DocSep.Split(string(data), -1)
	for i, doc := range docs {
		if IsBlankYAML(doc) {
			continue
		}
		where := fmt.Sprintf("document %d", i+1)
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("%s: is not valid YAML or JSON: %v", where, err)
		}
		raws, listed, err := DocumentItems(js)
		switch {
		case errors.Is(err, ErrNotObject):
			return nil, fmt.Errorf("%s: expected an object, a list or {\"items\": [...]}", where)
		case err != nil:
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		for j, raw := range raws {
			w := where
			if listed {
				w += fmt.Sprintf(" item %d", j+1)
			}
			var tm struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
			}
			if err := json.Unmarshal(raw, &tm); err != nil {
				return nil, fmt.Errorf("%s: %v", w, strings.TrimPrefix(err.Error(), "json: "))
			}
			out = append(out, Object{Where: w, js: raw, kind: tm.Kind, api: tm.APIVersion})
		}
	}
	return out, nil
}

// HasKinds says whether any object carries a kind: such a file holds
// Kubernetes documents (metal3), not rackfence hosts.
func HasKinds(objs []Object) bool {
	for _, o := range objs {
		if o.kind != "" {
			return true
		}
	}
	return false
}

// ConvertBMH turns metal3 documents into a plan input. Malformed documents
// are errors naming the document and field; hosts rackfence cannot take
// as they are go to Refused with why.
func ConvertBMH(objs []Object, o BMHOptions) (*Input, error) {
	in := &Input{Records: map[string]wire.Credentials{}}
	var bmhs []struct {
		Where string
		d     bmhDoc
	}
	secrets := map[string]SecretDoc{} // by namespace/name
	secretWhere := map[string]string{}
	dayTwo := map[string]*dayTwoDocs{} // by namespace/name of their host
	var dayTwoOrder []*dayTwoDoc
	for _, ob := range objs {
		switch {
		case ob.kind == "BareMetalHost" && ob.api == "metal3.io/v1alpha1":
			d, err := decodeBMH(ob.js)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", ob.Where, err)
			}
			bmhs = append(bmhs, struct {
				Where string
				d     bmhDoc
			}{ob.Where, d})
		case ob.kind == "Secret" && ob.api == "v1":
			var s SecretDoc
			if err := json.Unmarshal(ob.js, &s); err != nil {
				return nil, fmt.Errorf("%s: Secret: %v (data values must be base64)", ob.Where, strings.TrimPrefix(err.Error(), "json: "))
			}
			if s.Metadata.Name == "" {
				return nil, fmt.Errorf("%s: Secret: field metadata.name is required", ob.Where)
			}
			k := qualified(s.Metadata)
			secrets[k] = s
			secretWhere[k] = ob.Where
		case (ob.kind == KindHostFirmwareSettings || ob.kind == KindHostFirmwareComponents || ob.kind == KindHostUpdatePolicy) && ob.api == apiMetal3:
			d, err := decodeDayTwo(ob.kind, ob.js, ob.Where)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", ob.Where, err)
			}
			k := qualified(d.meta)
			x := dayTwo[k]
			if x == nil {
				x = &dayTwoDocs{}
				dayTwo[k] = x
			}
			slot := map[string]**dayTwoDoc{KindHostFirmwareSettings: &x.hfs, KindHostFirmwareComponents: &x.hfc, KindHostUpdatePolicy: &x.hup}[ob.kind]
			if *slot != nil {
				return nil, fmt.Errorf("%s: %s %s is also %s: give one per host", ob.Where, ob.kind, k, (*slot).where)
			}
			*slot = d
			dayTwoOrder = append(dayTwoOrder, d)
		case ob.kind == KindFirmwareSchema && ob.api == apiMetal3:
			var m struct {
				Metadata k8sMeta `json:"metadata"`
			}
			_ = json.Unmarshal(ob.js, &m)
			in.Notes = append(in.Notes, fmt.Sprintf("%s: FirmwareSchema %s ignored: it is what a BMC's BIOS attribute registry gives, and the rack agent reads the registry from each host's BMC", ob.Where, qualified(m.Metadata)))
		case ob.kind == "":
			return nil, fmt.Errorf("%s: has no kind; a file of BareMetalHost and Secret documents cannot also hold rackfence hosts", ob.Where)
		default:
			return nil, fmt.Errorf("%s: kind %q (apiVersion %q) is not supported; host apply reads BareMetalHost, HostFirmwareSettings, HostFirmwareComponents, HostUpdatePolicy, FirmwareSchema (metal3.io/v1alpha1) and Secret (v1)", ob.Where, ob.kind, ob.api)
		}
	}
	for _, b := range bmhs {
		if x := dayTwo[qualified(b.d.Metadata)]; x != nil {
			for _, d := range []*dayTwoDoc{x.hfs, x.hfc, x.hup} {
				if d != nil {
					d.used = true
				}
			}
		}
	}
	for _, d := range dayTwoOrder {
		if !d.used {
			return nil, fmt.Errorf("%s: %s %s: no BareMetalHost %s in the input; host apply maps it onto the BareMetalHost of the same name and namespace: give them together", d.where, d.kind, qualified(d.meta), qualified(d.meta))
		}
	}
	namespaces := map[string]bool{}
	for _, b := range bmhs {
		namespaces[b.d.Metadata.Namespace] = true
	}
	recordName := func(ns, name string) string {
		if o.NamespacePrefix && ns != "" {
			return ns + "-" + name
		}
		return name
	}
	recordFrom := map[string]string{} // record name -> namespace/secret
	hostFrom := map[string]string{}
	machines := NewMachineIndex() // mapped BMC addresses so far
	used := map[string]bool{}
	withheldNoted := map[string]bool{}
	bareNoted := map[string]bool{} // namespace/name of a Secret given without a namespace
	for _, b := range bmhs {
		x := dayTwo[qualified(b.d.Metadata)]
		ph, refs, errs := mapBMH(b.d, o, x)
		ph.Source = b.Where + ": BareMetalHost " + qualified(b.d.Metadata)
		for _, ref := range refs {
			k := qualified(k8sMeta{Namespace: b.d.Metadata.Namespace, Name: ref.secret})
			if _, ok := secrets[k]; !ok && b.d.Metadata.Namespace != "" {
				// A Secret written without a namespace beside a host that
				// has one (metal3's docs show them so): kubectl apply -n
				// puts both in the host's namespace, and so does this.
				if _, bare := secrets[ref.secret]; bare {
					if !bareNoted[k] {
						bareNoted[k] = true
						in.Notes = append(in.Notes, fmt.Sprintf("%s: Secret %s has no metadata.namespace: taken as %s, the namespace of BareMetalHost %s (%s) that references it, where kubectl apply -n %s puts it",
							secretWhere[ref.secret], ref.secret, k, qualified(b.d.Metadata), b.Where, b.d.Metadata.Namespace))
					}
					k = ref.secret
				}
			}
			rn := recordName(b.d.Metadata.Namespace, ref.secret)
			if err := wire.ValidateName(ref.field, rn); err != nil {
				errs = append(errs, err.Error())
				continue
			}
			if prev, ok := recordFrom[rn]; ok && prev != k {
				errs = append(errs, fmt.Sprintf("%s: Secret %s and Secret %s would both become credentials record %q; use --namespace-prefix", ref.field, prev, k, rn))
				continue
			}
			recordFrom[rn] = k
			ref.set(rn)
			ph.Secrets = append(ph.Secrets, rn)
			if s, ok := secrets[k]; ok {
				used[k] = true
				if w, ok := s.Metadata.Annotations[AnnWithheld]; ok {
					// An export without the values: the record must exist.
					if !withheldNoted[k] {
						withheldNoted[k] = true
						in.Notes = append(in.Notes, fmt.Sprintf("%s: Secret %s has %s (%s were not exported): its record is not written", secretWhere[k], k, AnnWithheld, w))
					}
					continue
				}
				if ref.field == "spec.bmc.credentialsName" {
					if why := loginMissing(s); why != "" {
						errs = append(errs, fmt.Sprintf("%s: Secret %s (%s) %s", ref.field, k, secretWhere[k], why))
						continue
					}
				}
				if _, done := in.Records[rn]; !done {
					cr, err := secretRecord(s, rn)
					if err != nil {
						return nil, fmt.Errorf("%s: Secret %s: %v", secretWhere[k], k, err)
					}
					in.Records[rn] = cr
					if enc := encodedStringData(s); len(enc) > 0 {
						in.Notes = append(in.Notes, fmt.Sprintf("%s: Secret %s: stringData.%s look base64-encoded; stringData is taken as written, as Kubernetes takes it, so that encoded text is the login: move them under data if they are encoded", secretWhere[k], k, strings.Join(enc, " and stringData.")))
					}
				}
			}
		}
		if prev, ok := hostFrom[ph.Host.Name]; ok {
			errs = append(errs, fmt.Sprintf("host name %q is also %s (hosts are named after metadata.name, whatever the namespace)", ph.Host.Name, prev))
		}
		hostFrom[ph.Host.Name] = ph.Source
		if a := ph.Host.BMC.Address; a != "" {
			if who, theirs, ok := machines.Find(a); ok {
				errs = append(errs, fmt.Sprintf("field spec.bmc.address %q names the same machine as %s (%q): %s", b.d.Spec.BMC.Address, who, theirs, SameMachineHint))
			}
			machines.Add(a, ph.Source)
		}
		if len(errs) == 0 {
			if err := wire.ValidateHost(&ph.Host, ph.Host.Name); err != nil {
				var fe *wire.FieldError
				if errors.As(err, &fe) {
					if f, ok := dayTwoField(fe.Field, x); ok {
						errs = append(errs, f+" "+fe.Message)
					} else {
						errs = append(errs, fmt.Sprintf("field %s %s", bmhField(fe.Field), fe.Message))
					}
				} else {
					errs = append(errs, err.Error())
				}
			}
		}
		if len(errs) > 0 {
			in.refuse(ph.Source, errs...)
			continue
		}
		for _, n := range ph.notes {
			in.Notes = append(in.Notes, ph.Source+": "+n)
		}
		in.Hosts = append(in.Hosts, *ph)
	}
	var ignored []string
	for k := range secrets {
		if !used[k] {
			ignored = append(ignored, k)
		}
	}
	sort.Strings(ignored)
	for _, k := range ignored {
		in.Notes = append(in.Notes, fmt.Sprintf("%s: Secret %s ignored: no BareMetalHost references it", secretWhere[k], k))
	}
	return in, nil
}

func qualified(m k8sMeta) string {
	if m.Namespace == "" {
		return m.Name
	}
	return m.Namespace + "/" + m.Name
}

// decodeBMH decodes one BareMetalHost; its spec strictly, so a field BMO
// adds later (or a misspelt one) is refused by name, not silently dropped.
func decodeBMH(raw []byte) (bmhDoc, error) {
	var d bmhDoc
	var outer struct {
		APIVersion string          `json:"apiVersion"`
		Kind       string          `json:"kind"`
		Metadata   k8sMeta         `json:"metadata"`
		Spec       json.RawMessage `json:"spec"`
		Status     bmhStatus       `json:"status"`
	}
	if err := json.Unmarshal(raw, &outer); err != nil {
		return d, fmt.Errorf("BareMetalHost: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	d.APIVersion, d.Kind, d.Metadata, d.Status = outer.APIVersion, outer.Kind, outer.Metadata, outer.Status
	if d.Metadata.Name == "" {
		return d, fmt.Errorf("BareMetalHost: field metadata.name is required")
	}
	if len(outer.Spec) == 0 || string(outer.Spec) == "null" {
		// A host known without BMC details (metal3's demo "discovered"
		// host): rackfence keeps it unmanaged until spec.bmc is given.
		d.noSpec = true
		return d, nil
	}
	if f := unknownField(outer.Spec, reflect.TypeOf(bmhSpec{}), "spec"); f != "" {
		return d, fmt.Errorf("BareMetalHost %s: field %s is not in metal3's BareMetalHost API (metal3.io/v1alpha1; kubectl apply refuses it too): misspelt? remove it", d.Metadata.Name, f)
	}
	dec := json.NewDecoder(bytes.NewReader(outer.Spec))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d.Spec); err != nil {
		return d, fmt.Errorf("BareMetalHost %s: spec: %s", d.Metadata.Name, strings.TrimPrefix(err.Error(), "json: "))
	}
	return d, nil
}

// bmhField names a rackfence host field as the BMH spells it.
func bmhField(f string) string {
	switch {
	case f == "name":
		return "metadata.name"
	case f == "rack":
		return "rack (from --rack or --rack-from)"
	case f == "labels" || strings.HasPrefix(f, "labels"):
		return "metadata." + f
	case f == "consumer":
		return "spec.consumerRef"
	case f == "bmc.credentials":
		return "spec.bmc.credentialsName"
	case strings.HasSuffix(f, ".name") && (strings.HasPrefix(f, "userData") || strings.HasPrefix(f, "networkData") || strings.HasPrefix(f, "metaData")):
		return "spec." + f
	case f == "preprovisioningNetworkData" || strings.HasPrefix(f, "preprovisioningNetworkData."):
		return "spec.preprovisioningNetworkDataName"
	}
	return "spec." + f
}

// secretUse is one Secret a BMH references and where the record name goes.
type secretUse struct {
	field  string
	secret string
	set    func(record string)
}

// mapBMH maps one BMH's spec, labels, annotations and status.
func mapBMH(d bmhDoc, o BMHOptions, x *dayTwoDocs) (*PlannedHost, []secretUse, []string) {
	var errs []string
	s := d.Spec
	ph := &PlannedHost{}
	h := &ph.Host
	h.Name = d.Metadata.Name
	if d.noSpec {
		ph.notes = append(ph.notes, "has no spec: registered unmanaged (known, no BMC details, never powered or provisioned); add spec.bmc (address, credentialsName) to manage it")
	}
	errs = append(errs, s.refused()...)
	ph.notes = append(ph.notes, s.ignored()...)
	rack, err := rackOf(d.Metadata, o)
	if err != nil {
		errs = append(errs, err.Error())
	}
	h.Rack = rack
	addr, err := mapBMCAddress(s.BMC.Address)
	if err != nil {
		errs = append(errs, err.Error())
	}
	h.BMC.Address = addr
	bm, err := bootMethodOf(s.BMC.Address, d.Metadata.Annotations)
	if err != nil {
		errs = append(errs, err.Error())
	}
	h.BootMethod = bm
	h.BMC.DisableCertificateVerification = s.BMC.DisableCertificateVerification
	h.BootMACAddress = s.BootMACAddress
	h.Online = s.Online
	h.ExternallyProvisioned = s.ExternallyProvisioned
	state := d.Status.Provisioning.State
	if st, ok := d.Metadata.Annotations[AnnStatus]; ok && state == "" {
		var a bmhStatus
		if err := json.Unmarshal([]byte(st), &a); err != nil {
			errs = append(errs, fmt.Sprintf("annotation %s is not a BareMetalHost status (%v): fix or remove it", AnnStatus, strings.TrimPrefix(err.Error(), "json: ")))
		}
		state = a.Provisioning.State
	}
	switch state {
	case "provisioned", "externally provisioned":
		if !h.ExternallyProvisioned {
			ph.notes = append(ph.notes, fmt.Sprintf("status.provisioning.state %q: adopted as externally provisioned (never reprovisioned)", state))
		}
		h.ExternallyProvisioned = true
	}
	if s.Image != nil {
		h.Image = &wire.Image{URL: s.Image.URL, Checksum: s.Image.Checksum, ChecksumType: s.Image.ChecksumType, Format: s.Image.DiskFormat}
	}
	if r := s.RootDeviceHints; r != nil {
		h.RootDeviceHints = &wire.RootDeviceHints{DeviceName: r.DeviceName, HCTL: r.HCTL, Model: r.Model, Vendor: r.Vendor,
			SerialNumber: r.SerialNumber, MinSizeGigabytes: r.MinSizeGigabytes, WWN: r.WWN, WWNWithExtension: r.WWNWithExtension,
			WWNVendorExtension: r.WWNVendorExtension, Rotational: r.Rotational}
	}
	if rd, note := s.profileHints(); note != "" {
		if rd != nil {
			h.RootDeviceHints = rd
		}
		ph.notes = append(ph.notes, note)
	}
	h.BootMode = s.BootMode
	h.AutomatedCleaningMode = s.AutomatedCleaningMode
	if s.ConsumerRef != nil {
		c := s.ConsumerRef
		ns := c.Namespace
		if ns == "" {
			ns = d.Metadata.Namespace
		}
		h.Consumer = strings.Trim(c.Kind+"/"+ns+"/"+c.Name, "/")
	}
	if s.Description != "" {
		ph.notes = append(ph.notes, "spec.description dropped (rackfence hosts have no description)")
	}
	if len(d.Metadata.Labels) > 0 {
		h.Labels = map[string]string{}
		for k, v := range d.Metadata.Labels {
			h.Labels[k] = v
		}
	}
	var refs []secretUse
	if s.BMC.CredentialsName != "" {
		refs = append(refs, secretUse{"spec.bmc.credentialsName", s.BMC.CredentialsName, func(r string) { h.BMC.Credentials = r }})
	}
	dataRef := func(field string, r *secretRef, dst **wire.SecretReference) {
		if r == nil || r.Name == "" {
			return
		}
		if r.Namespace != "" && r.Namespace != d.Metadata.Namespace {
			host := fmt.Sprintf("the host's namespace %q", d.Metadata.Namespace)
			if d.Metadata.Namespace == "" {
				host = "the host's, which has none (no metadata.namespace)"
			}
			errs = append(errs, fmt.Sprintf("%s.namespace %q differs from %s; rackfence reads Secrets of the host's own namespace: set the host's metadata.namespace to %q, or drop %s.namespace", field, r.Namespace, host, r.Namespace, field))
			return
		}
		refs = append(refs, secretUse{field, r.Name, func(rn string) { *dst = &wire.SecretReference{Name: rn} }})
	}
	dataRef("spec.userData", s.UserData, &h.UserData)
	dataRef("spec.networkData", s.NetworkData, &h.NetworkData)
	dataRef("spec.metaData", s.MetaData, &h.MetaData)
	if s.PreprovisioningNetworkDataName != "" {
		dataRef("spec.preprovisioningNetworkDataName", &secretRef{Name: s.PreprovisioningNetworkDataName}, &h.PreprovisioningNetworkData)
	}
	e, notes := mapDayTwo(d, x, h)
	errs = append(errs, e...)
	ph.notes = append(ph.notes, notes...)
	errs = append(errs, mapAnnotations(d.Metadata.Annotations, ph)...)
	return ph, refs, errs
}

// rackOf picks the host's rack from --rack or --rack-from.
func rackOf(m k8sMeta, o BMHOptions) (string, error) {
	if o.RackFrom == "" {
		if o.Rack != "" {
			return o.Rack, nil
		}
		if r := m.Annotations[AnnRack]; r != "" {
			return r, nil // written by host export
		}
		return "", fmt.Errorf("no rack: give --rack R or --rack-from label:KEY|annotation:KEY")
	}
	src, key, _ := strings.Cut(o.RackFrom, ":")
	var v string
	var ok bool
	if src == "label" {
		v, ok = m.Labels[key]
	} else {
		v, ok = m.Annotations[key]
	}
	if !ok || v == "" {
		if o.Rack != "" {
			return o.Rack, nil
		}
		return "", fmt.Errorf("metadata.%ss has no %q (--rack-from %s) and no --rack was given", src, key, o.RackFrom)
	}
	return v, nil
}

// bmcSchemes maps BMO's bmc.address schemes to rackfence's. The
// virtual-media and vendor flavours of Redfish all speak Redfish; a
// "+http" suffix means plain HTTP.
var bmcSchemes = map[string]string{
	"redfish":                    "redfish",
	"redfish+https":              "redfish",
	"redfish+http":               "redfish+http",
	"redfish-virtualmedia":       "redfish",
	"redfish-virtualmedia+https": "redfish",
	"redfish-virtualmedia+http":  "redfish+http",
	"redfish-uefihttp":           "redfish",
	"redfish-uefihttp+https":     "redfish",
	"redfish-uefihttp+http":      "redfish+http",
	"idrac-redfish":              "redfish",
	"idrac-redfish+https":        "redfish",
	"idrac-redfish+http":         "redfish+http",
	"idrac-virtualmedia":         "redfish",
	"idrac-virtualmedia+https":   "redfish",
	"idrac-virtualmedia+http":    "redfish+http",
	"ilo5-redfish":               "redfish",
	"ilo5-redfish+https":         "redfish",
	"ilo5-virtualmedia":          "redfish",
	"ilo5-virtualmedia+https":    "redfish",
	"ipmi":                       "ipmi",
}

// mapBMCAddress rewrites a BMO bmc.address into rackfence's schemes.
func mapBMCAddress(addr string) (string, error) {
	if addr == "" {
		return "", nil
	}
	scheme, rest, ok := strings.Cut(addr, "://")
	if !ok {
		// BMO takes a bare host (or host:port) as IPMI.
		if _, err := url.Parse("ipmi://" + addr); err != nil {
			return "", fmt.Errorf("field spec.bmc.address %q is not an address: %v", addr, err)
		}
		return "ipmi://" + addr, nil
	}
	to, ok := bmcSchemes[strings.ToLower(scheme)]
	if !ok {
		return "", fmt.Errorf("field spec.bmc.address: scheme %q is not supported; rackfence speaks Redfish and IPMI (redfish://, redfish-virtualmedia://, idrac-virtualmedia://, ilo5-virtualmedia://, ipmi:// and their +http forms)", scheme)
	}
	return to + "://" + rest, nil
}

// mapAnnotations turns metal3 annotations into intents. Unknown
// annotations are ignored (Kubernetes tools add many).
func mapAnnotations(ann map[string]string, ph *PlannedHost) []string {
	var errs []string
	keys := make([]string, 0, len(ann))
	for k := range ann {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := ann[k]
		switch {
		case k == AnnDetached:
			ph.Detach = true
		case k == AnnPaused:
			errs = append(errs, fmt.Sprintf("annotation %s is not supported: rackfence has no pause; remove it, or use %s to stop rackfence managing the host", AnnPaused, AnnDetached))
		case k == AnnReboot:
			r, err := rebootArgs(k, v)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			ph.Reboot = &r
		case strings.HasPrefix(k, AnnReboot+"/"):
			r, err := rebootArgs(k, v)
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			r.PowerOff, r.Requester = true, strings.TrimPrefix(k, AnnReboot+"/")
			if err := wire.ValidateName("annotation "+k, r.Requester); err != nil {
				errs = append(errs, err.Error())
				continue
			}
			ph.PowerOff = append(ph.PowerOff, r)
		case k == AnnHardwareDetails:
			ph.notes = append(ph.notes, "annotation "+AnnHardwareDetails+" ignored: rackfence records the hardware its own inspection finds")
		case k == AnnInspect:
			if v == "disabled" {
				ph.notes = append(ph.notes, "annotation inspect.metal3.io: disabled ignored: rackfence always inspects a newly registered host (an externally provisioned one is not inspected)")
			} else if v == "" {
				ph.Inspect = true
			} else {
				errs = append(errs, fmt.Sprintf("annotation %s: value %q is not \"\" or \"disabled\"", k, v))
			}
		}
	}
	return errs
}

// rebootArgs reads BMO's reboot annotation value: empty or {"mode": "hard"|"soft"}.
func rebootArgs(k, v string) (wire.RebootRequest, error) {
	r := wire.RebootRequest{Reason: "metal3 annotation " + k}
	if strings.TrimSpace(v) == "" {
		return r, nil
	}
	var a struct {
		Mode  string `json:"mode"`
		Force bool   `json:"force"`
	}
	if err := json.Unmarshal([]byte(v), &a); err != nil {
		return r, fmt.Errorf("annotation %s: value %q is not {\"mode\": \"hard\"|\"soft\"}", k, v)
	}
	switch a.Mode {
	case "", "hard", "soft":
		r.Mode = a.Mode
	default:
		return r, fmt.Errorf("annotation %s: mode %q is not hard or soft", k, a.Mode)
	}
	return r, nil
}

// loginMissing says why a Secret named by spec.bmc.credentialsName is no
// BMC login ("" when it is one): BMO refuses one without a username or a
// password (the host stays in registration error), so rackfence does too.
func loginMissing(s SecretDoc) string {
	vals := map[string]string{}
	for k, v := range s.Data {
		vals[k] = string(v)
	}
	for k, v := range s.StringData {
		vals[k] = v
	}
	var missing []string
	for _, k := range []string{"username", "password"} {
		if v, ok := vals[k]; !ok {
			missing = append(missing, "no "+k)
		} else if v == "" {
			missing = append(missing, "an empty "+k)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return "has " + strings.Join(missing, " and ") + ": metal3 refuses BMC credentials without both (the host stays in registration error); set data.username and data.password"
}

// encodedStringData names the login keys of a Secret's stringData whose
// values read as padded base64 of printable text ("YWRtaW4=" for admin):
// written under stringData, which is not decoded, by mistake. Never the
// values themselves.
func encodedStringData(s SecretDoc) []string {
	var out []string
	for _, k := range []string{"username", "password"} {
		v := s.StringData[k]
		if len(v) < 4 || len(v)%4 != 0 || !strings.HasSuffix(v, "=") {
			continue
		}
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil || len(b) == 0 {
			continue
		}
		printable := true
		for _, c := range b {
			printable = printable && c >= 0x20 && c < 0x7f
		}
		if printable {
			out = append(out, k)
		}
	}
	return out
}

// secretRecord makes a credentials record from a Secret: username and
// password become the BMC login, every other key goes to data.
func secretRecord(s SecretDoc, name string) (wire.Credentials, error) {
	cr := wire.Credentials{Name: name}
	vals := map[string]string{}
	for k, v := range s.Data {
		vals[k] = string(v)
	}
	for k, v := range s.StringData {
		vals[k] = v
	}
	for k, v := range vals {
		switch k {
		case "username":
			cr.Username = v
		case "password":
			cr.Password = v
		default:
			if cr.Data == nil {
				cr.Data = map[string]string{}
			}
			cr.Data[k] = v
		}
	}
	if cr.Username == "" && cr.Data == nil {
		return cr, fmt.Errorf("has neither a username nor any other key")
	}
	return cr, nil
}
