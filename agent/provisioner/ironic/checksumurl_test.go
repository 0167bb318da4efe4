package ironic_test

import (
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestChecksumURLThroughIronic (the real Ironic, fake-hardware): a host
// whose image.checksum is the URL of a checksum file (metal3's usual
// form) is provisioned, and Ironic holds the URL as the node's
// image_checksum, or as image_os_hash_value beside the algorithm
// checksumType names, for its deploy to fetch: Ironic takes both.
func TestChecksumURLThroughIronic(t *testing.T) {
	url := needIronic(t)
	p := newProv(t, url, fakeHW)
	ctx := ctxT(t)
	for _, c := range []struct {
		typ, key, algo string
	}{
		{"", "image_checksum", ""},
		{"sha256", "image_os_hash_value", "sha256"},
	} {
		h := fakeHost("cksumurl")
		r := must(t, "register")(p.Register(ctx, h))
		h.ProvisioningID = r.ProvisioningID
		must(t, "provide")(p.Provide(ctx, h))
		wantState(t, url, h.ProvisioningID, "available")
		sums := "http://127.0.0.1:9/images/SHA256SUMS"
		h.Image = &wire.Image{URL: "http://127.0.0.1:9/images/disk.qcow2", Checksum: sums, ChecksumType: c.typ, Format: "qcow2"}
		must(t, "provision")(p.Provision(ctx, h))
		n := wantState(t, url, h.ProvisioningID, "active")
		if n.InstanceInfo[c.key] != sums || (c.algo != "" && n.InstanceInfo["image_os_hash_algo"] != c.algo) {
			t.Errorf("checksumType %q: Ironic's instance_info %v; want %s %s (algo %q)", c.typ, n.InstanceInfo, c.key, sums, c.algo)
		}
		must(t, "deprovision")(p.Deprovision(ctx, h))
		must(t, "delete")(p.Delete(ctx, h))
	}
}
