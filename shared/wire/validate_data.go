package wire

import (
	"fmt"
	"sort"
)

// Credentials data (sealed key/value content a host's userData,
// networkData, metaData and preprovisioningNetworkData name).
const (
	// MaxCredentialsData bounds one record's data: the sum of its keys'
	// and values' lengths (a config drive's user data is a few KiB; a
	// request body is at most 1 MiB).
	MaxCredentialsData = 256 << 10
	// MaxDataKey is the longest data key (a Kubernetes Secret key's).
	MaxDataKey = 253
)

// Keys of a record's data map that a host's fields read (BMO's Secret
// convention); DataKeyValue is the lone key any of them may use instead.
const (
	DataKeyUserData    = "userData"
	DataKeyNetworkData = "networkData"
	DataKeyMetaData    = "metaData"
	DataKeyValue       = "value"
)

// SecretRef is one record a host's spec names for its config drive.
type SecretRef struct {
	// Field is the spec field naming the record (userData, networkData,
	// metaData, preprovisioningNetworkData).
	Field string
	// Name is the record's name.
	Name string
	// Key is the data key the field reads (or DataKeyValue, alone).
	Key string
}

// SecretRefs lists the data records h names, in a fixed order.
func (h *Host) SecretRefs() []SecretRef {
	var out []SecretRef
	for _, r := range []struct {
		field, key string
		ref        *SecretReference
	}{
		{"userData", DataKeyUserData, h.UserData},
		{"networkData", DataKeyNetworkData, h.NetworkData},
		{"metaData", DataKeyMetaData, h.MetaData},
		{"preprovisioningNetworkData", DataKeyNetworkData, h.PreprovisioningNetworkData},
	} {
		if r.ref != nil {
			out = append(out, SecretRef{Field: r.field, Name: r.ref.Name, Key: r.key})
		}
	}
	return out
}

// NamesRecord reports whether h names credentials record name, as its
// BMC's credentials or as the record of one of its data fields.
func (h *Host) NamesRecord(name string) bool {
	if h.BMC.Credentials == name {
		return true
	}
	for _, r := range h.SecretRefs() {
		if r.Name == name {
			return true
		}
	}
	return false
}

// validateSecretRefs checks the record names of a host's data fields.
func validateSecretRefs(h *Host) error {
	for _, r := range h.SecretRefs() {
		if err := ValidateName(r.Field+".name", r.Name); err != nil {
			return err
		}
	}
	return nil
}

// ValidateDataKey checks one key of a data map (a Kubernetes Secret key:
// letters, digits, '-', '_' and '.', at most 253).
func ValidateDataKey(field, k string) error {
	if k == "" {
		return fieldErr(field, "has an empty key; keys are letters, digits, '-', '_' and '.'")
	}
	if len(k) > MaxDataKey {
		return fieldErr(field, "key is %d characters long; at most %d are allowed", len(k), MaxDataKey)
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fieldErr(field, "%q is not a valid key: use letters, digits, '-', '_' and '.'", k)
		}
	}
	return nil
}

// ValidateCredentialsData checks a record's data map: each key's syntax,
// and the total size (keys and values) against MaxCredentialsData.
func ValidateCredentialsData(data map[string]string) error {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	total := 0
	for _, k := range keys {
		field := "data." + k
		if k == "" || len(k) > MaxDataKey {
			field = "data" // no usable name for the field
		}
		if err := ValidateDataKey(field, k); err != nil {
			return err
		}
		total += len(k) + len(data[k])
	}
	if total > MaxCredentialsData {
		return fieldErr("data", "holds %d bytes (keys and values); at most %d (%s) are allowed per record: split it into several records", total, MaxCredentialsData, fmt.Sprintf("%d KiB", MaxCredentialsData>>10))
	}
	return nil
}
