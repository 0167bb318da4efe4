package importer

import "encoding/json"

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

	// Refused by name: rackfence has nothing to map them to.
	Architecture    json.RawMessage `json:"architecture,omitempty"`
	CustomDeploy    json.RawMessage `json:"customDeploy,omitempty"`
	Firmware        json.RawMessage `json:"firmware,omitempty"`
	HardwareProfile json.RawMessage `json:"hardwareProfile,omitempty"`
	RAID            json.RawMessage `json:"raid,omitempty"`
	Taints          json.RawMessage `json:"taints,omitempty"`
	HardwareData    json.RawMessage `json:"hardwareData,omitempty"`
}

// refusedSpecFields lists the BMH spec fields rackfence refuses, with why.
func (s *bmhSpec) refused() []string {
	var out []string
	add := func(raw json.RawMessage, name, why string) {
		if len(raw) > 0 && string(raw) != "null" && string(raw) != "{}" && string(raw) != "[]" && string(raw) != `""` {
			out = append(out, "spec."+name+" is not supported: "+why)
		}
	}
	add(s.Architecture, "architecture", "rackfence does not select images or ramdisks by architecture; remove the field")
	add(s.CustomDeploy, "customDeploy", "rackfence deploys only spec.image; remove the field or provision the host outside rackfence (externallyProvisioned: true)")
	add(s.Firmware, "firmware", "rackfence does not change BIOS settings; remove the field")
	add(s.HardwareProfile, "hardwareProfile", "deprecated in BMO and unused by rackfence; remove the field")
	add(s.RAID, "raid", "rackfence does not configure RAID; remove the field")
	add(s.Taints, "taints", "rackfence has no taints; use labels")
	add(s.HardwareData, "hardwareData", "rackfence inspects hosts itself; remove the field")
	return out
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
