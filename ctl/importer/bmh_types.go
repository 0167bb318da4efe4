package importer

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/rackfence/rackfence/shared/wire"
)

// The metal3 BareMetalHost (metal3.io/v1alpha1) and Kubernetes Secret (v1)
// documents host apply reads, modelled on baremetal-operator's
// apis/metal3.io/v1alpha1/baremetalhost_types.go. Every spec field BMO
// publishes is listed so that an unmapped one is refused by name.

type k8sMeta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type bmhDoc struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Metadata   k8sMeta   `json:"metadata"`
	Spec       bmhSpec   `json:"spec"`
	Status     bmhStatus `json:"status,omitempty"`
	noSpec     bool      // the document has no spec (an unmanaged host)
}

type bmhBMC struct {
	Address                        string `json:"address"`
	CredentialsName                string `json:"credentialsName"`
	DisableCertificateVerification bool   `json:"disableCertificateVerification,omitempty"`
}

type bmhImage struct {
	URL          string `json:"url"`
	Checksum     string `json:"checksum,omitempty"`
	ChecksumType string `json:"checksumType,omitempty"`
	DiskFormat   string `json:"format,omitempty"`
	// Refused by name: only for oci:// images, which rackfence cannot fetch.
	OCIAuthSecretName json.RawMessage `json:"ociAuthSecretName,omitempty"`
}

type bmhRootDeviceHints struct {
	DeviceName         string `json:"deviceName,omitempty"`
	HCTL               string `json:"hctl,omitempty"`
	Model              string `json:"model,omitempty"`
	Vendor             string `json:"vendor,omitempty"`
	SerialNumber       string `json:"serialNumber,omitempty"`
	MinSizeGigabytes   int    `json:"minSizeGigabytes,omitempty"`
	WWN                string `json:"wwn,omitempty"`
	WWNWithExtension   string `json:"wwnWithExtension,omitempty"`
	WWNVendorExtension string `json:"wwnVendorExtension,omitempty"`
	Rotational         *bool  `json:"rotational,omitempty"`
}

type secretRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

type objectRef struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	// The rest of a Kubernetes ObjectReference: read, not kept.
	UID             string `json:"uid,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
	FieldPath       string `json:"fieldPath,omitempty"`
}

type bmhSpec struct {
	BMC                            bmhBMC              `json:"bmc"`
	BootMACAddress                 string              `json:"bootMACAddress,omitempty"`
	Online                         bool                `json:"online"`
	ExternallyProvisioned          bool                `json:"externallyProvisioned,omitempty"`
	Image                          *bmhImage           `json:"image,omitempty"`
	RootDeviceHints                *bmhRootDeviceHints `json:"rootDeviceHints,omitempty"`
	BootMode                       string              `json:"bootMode,omitempty"`
	AutomatedCleaningMode          string              `json:"automatedCleaningMode,omitempty"`
	UserData                       *secretRef          `json:"userData,omitempty"`
	NetworkData                    *secretRef          `json:"networkData,omitempty"`
	MetaData                       *secretRef          `json:"metaData,omitempty"`
	PreprovisioningNetworkDataName string              `json:"preprovisioningNetworkDataName,omitempty"`
	ConsumerRef                    *objectRef          `json:"consumerRef,omitempty"`
	Description                    string              `json:"description,omitempty"`
	Firmware                       *bmhFirmware        `json:"firmware,omitempty"`
	RAID                           *bmhRAID            `json:"raid,omitempty"`

	// metal3 fields rackfence does not map: refused or ignored by name
	// (refused, ignored).
	Architecture      json.RawMessage `json:"architecture,omitempty"`
	CustomDeploy      json.RawMessage `json:"customDeploy,omitempty"`
	HardwareProfile   string          `json:"hardwareProfile,omitempty"`
	Taints            json.RawMessage `json:"taints,omitempty"`
	HardwareData      json.RawMessage `json:"hardwareData,omitempty"`
	DisablePowerOff   json.RawMessage `json:"disablePowerOff,omitempty"`
	InspectionMode    string          `json:"inspectionMode,omitempty"`
	NetworkInterfaces json.RawMessage `json:"networkInterfaces,omitempty"`
}

// set says whether a raw field holds a value other than its zero.
func set(raw json.RawMessage) bool {
	switch string(raw) {
	case "", "null", "{}", "[]", `""`, "false":
		return false
	}
	return true
}

// refusedSpecFields lists the BMH spec fields rackfence refuses, with why.
func (s *bmhSpec) refused() []string {
	var out []string
	add := func(raw json.RawMessage, name, why string) {
		if set(raw) {
			out = append(out, "spec."+name+" is not supported: "+why)
		}
	}
	add(s.Architecture, "architecture", "rackfence does not select images or ramdisks by architecture; remove the field")
	add(s.CustomDeploy, "customDeploy", "rackfence deploys only spec.image; remove the field or provision the host outside rackfence (externallyProvisioned: true)")
	add(s.HardwareData, "hardwareData", "rackfence inspects hosts itself; remove the field")
	add(s.NetworkInterfaces, "networkInterfaces", "a metal3 field rackfence does not support: it configures no switch ports (HostNetworkAttachment); configure the ports outside rackfence and remove the field")
	add(s.DisablePowerOff, "disablePowerOff", "a metal3 field rackfence does not support: rackfence powers hosts off (online: false, power-off holds, deprovisioning); remove the field for a host that may be powered off")
	if s.Image != nil {
		add(s.Image.OCIAuthSecretName, "image.ociAuthSecretName", "a metal3 field rackfence does not support: it fetches images over http(s) only, not from OCI registries")
	}
	switch s.InspectionMode {
	case "", "agent", "disabled", "fast":
	default:
		out = append(out, fmt.Sprintf("spec.inspectionMode %q is not one of metal3's disabled, agent, fast", s.InspectionMode))
	}
	return out
}

// ignored lists the notes for metal3 fields rackfence reads but does not
// act on.
func (s *bmhSpec) ignored() []string {
	var out []string
	if set(s.Taints) {
		out = append(out, "spec.taints ignored (a metal3 field BMO never implemented; rackfence has no taints: use labels)")
	}
	switch s.InspectionMode {
	case "disabled":
		out = append(out, "spec.inspectionMode: disabled ignored: rackfence always inspects a newly registered host (an externally provisioned one is not inspected)")
	case "fast":
		out = append(out, "spec.inspectionMode: fast ignored: rackfence inspects with its own provisioner (the direct provisioner reads the BMC; Ironic runs its agent)")
	}
	return out
}

// hardwareProfiles are the root disks BMO's deprecated hardware profiles
// chose (docs/api.md of baremetal-operator).
var hardwareProfiles = map[string]wire.RootDeviceHints{
	"unknown":   {DeviceName: "/dev/sda"},
	"libvirt":   {DeviceName: "/dev/vda"},
	"dell":      {HCTL: "0:0:0:0"},
	"dell-raid": {HCTL: "0:2:0:0"},
	"openstack": {DeviceName: "/dev/vdb"},
}

// profileHints maps spec.hardwareProfile: the profile's root disk when
// the spec gives no rootDeviceHints, else nothing; with a note either way.
func (s *bmhSpec) profileHints() (*wire.RootDeviceHints, string) {
	p := s.HardwareProfile
	if p == "" || p == "empty" {
		return nil, ""
	}
	rd, known := hardwareProfiles[p]
	switch {
	case s.RootDeviceHints != nil:
		return nil, fmt.Sprintf("spec.hardwareProfile %q ignored (deprecated in metal3): spec.rootDeviceHints choose the root disk", p)
	case known:
		return &rd, fmt.Sprintf("spec.hardwareProfile %q (deprecated in metal3) mapped to its root disk: rootDeviceHints %s", p, hintText(rd))
	}
	return nil, fmt.Sprintf("spec.hardwareProfile %q ignored (deprecated in metal3, and not one of its profiles): the provisioner picks the root disk; set spec.rootDeviceHints to choose it", p)
}

func hintText(h wire.RootDeviceHints) string {
	if h.DeviceName != "" {
		return "deviceName " + h.DeviceName
	}
	return "hctl " + h.HCTL
}

// unknownField returns the path of the first field of raw (a JSON object
// decoded into t) that t does not have, "" when there is none. Nested
// objects and lists of objects are walked, so the path names the field
// wherever it is (spec.bmc.adress, spec.image.checksumtype).
func unknownField(raw json.RawMessage, t reflect.Type, path string) string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		if t.Kind() == reflect.Slice {
			var items []json.RawMessage
			if json.Unmarshal(raw, &items) != nil {
				return ""
			}
			for i, it := range items {
				if f := unknownField(it, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); f != "" {
					return f
				}
			}
			return ""
		}
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return ""
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	fields := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			fields[name] = f.Type
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ft, ok := fields[k]
		if !ok {
			return path + "." + k
		}
		if ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Uint8 { // json.RawMessage
			continue
		}
		if f := unknownField(m[k], ft, path+"."+k); f != "" {
			return f
		}
	}
	return ""
}

type bmhStatus struct {
	Provisioning struct {
		State string `json:"state,omitempty"`
	} `json:"provisioning,omitempty"`
}

type SecretDoc struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   k8sMeta           `json:"metadata"`
	Type       string            `json:"type,omitempty"`
	Data       map[string][]byte `json:"data,omitempty"` // base64 on the wire
	StringData map[string]string `json:"stringData,omitempty"`
}
