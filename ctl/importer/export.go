package importer

import (
	"strings"

	"github.com/rackfence/rackfence/shared/wire"
)

// Annotations host export writes (and host apply reads back).
const (
	// AnnRack carries the host's rack; host apply reads it without --rack/--rack-from.
	AnnRack = "rackfence.io/rack"
	// AnnWithheld marks a Secret whose password and data values were not
	// exported; host apply does not write such a Secret's record.
	AnnWithheld = "rackfence.io/withheld"
)

// ExportedBMH is a BareMetalHost as export writes it (no status).
type ExportedBMH struct {
	APIVersion string  `json:"apiVersion"`
	Kind       string  `json:"kind"`
	Metadata   k8sMeta `json:"metadata"`
	Spec       bmhSpec `json:"spec"`
}

// ExportBMH is mapBMH's inverse; refs are the records the host names.
func ExportBMH(h wire.Host, ns string) (ExportedBMH, []string) {
	d := ExportedBMH{APIVersion: "metal3.io/v1alpha1", Kind: "BareMetalHost",
		Metadata: k8sMeta{Name: h.Name, Namespace: ns, Labels: h.Labels, Annotations: map[string]string{AnnRack: h.Rack}}}
	s := &d.Spec
	s.BMC = bmhBMC{Address: exportAddress(h, d.Metadata.Annotations), CredentialsName: h.BMC.Credentials, DisableCertificateVerification: h.BMC.DisableCertificateVerification}
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
	exportDayTwoSpec(h, &d)
	if in := h.Intents; in != nil {
		if in.Detach != nil {
			d.Metadata.Annotations[AnnDetached] = ""
		}
		for req, it := range in.PowerOff {
			_ = it
			d.Metadata.Annotations[AnnReboot+"/"+req] = ""
		}
	}
	return d, refs
}

// ExportSecret writes a record's username; the password and data values
// are withheld (the coordinator does not reveal them to the CLI).
func ExportSecret(cr *wire.Credentials, name, ns string) SecretDoc {
	s := SecretDoc{APIVersion: "v1", Kind: "Secret", Type: "Opaque",
		Metadata: k8sMeta{Name: name, Namespace: ns}}
	var withheld []string
	if cr.Username != "" {
		s.StringData = map[string]string{"username": cr.Username}
		withheld = append(withheld, "password")
	}
	withheld = append(withheld, cr.DataKeys...)
	if len(withheld) > 0 {
		s.Metadata.Annotations = map[string]string{AnnWithheld: strings.Join(withheld, ",")}
	}
	return s
}

// RevealedSecret writes a revealed record whole: username, password and
// data keys as the Secret's (base64) data.
func RevealedSecret(cr *wire.Credentials, name, ns string) SecretDoc {
	s := SecretDoc{APIVersion: "v1", Kind: "Secret", Type: "Opaque",
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
