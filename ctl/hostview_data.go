package ctl

import (
	"fmt"
	"time"

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

// configDriveLine is host get's line of the config drive the host was
// provisioned with: size, when the agent published it and when the BMC
// read it (its server is a line of its own; never its URL).
func configDriveLine(cd *wire.ConfigDriveStatus) string {
	size := fmt.Sprintf("%d bytes", cd.Size)
	if cd.Size >= 1<<10 {
		size = fmt.Sprintf("%.1f KiB", float64(cd.Size)/(1<<10))
	}
	line := fmt.Sprintf("%s, published %s", size, cd.PublishedAt.UTC().Format(time.RFC3339))
	if cd.ReadAt.IsZero() {
		return line + ", not read by the BMC yet"
	}
	return fmt.Sprintf("%s, read by the BMC %s (%s later)", line, cd.ReadAt.UTC().Format(time.RFC3339),
		cd.ReadAt.Sub(cd.PublishedAt).Round(100*time.Millisecond))
}
