package ctl

import (
	"fmt"

	"github.com/rackfence/rackfence/shared/wire"
)

// dataFieldLabel is host get's label of each data field.
var dataFieldLabel = map[string]string{
	"userData":                   "User data",
	"networkData":                "Network data",
	"metaData":                   "Meta data",
	"preprovisioningNetworkData": "Ramdisk network data",
}

// dataRefs adds a line per credentials record the host's data fields name
// (the record and the key read; never the content).
func dataRefs(k *kv, h *wire.Host) {
	for _, r := range h.SecretRefs() {
		k.add(dataFieldLabel[r.Field], fmt.Sprintf("credentials %s, key %s (or a lone key value)", r.Name, r.Key))
	}
}
