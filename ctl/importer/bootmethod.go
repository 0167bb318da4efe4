package importer

import (
	"fmt"
	"strings"

	"github.com/rackfence/rackfence/shared/wire"
)

// AnnBootMethod carries the host's bootMethod where no BMO address scheme
// says it (pxe); host export writes it, host apply reads it first.
const AnnBootMethod = "rackfence.io/boot-method"

// bootMethodOf is the bootMethod a BMO bmc.address means: the
// *-virtualmedia schemes boot by virtual media, redfish-uefihttp by UEFI
// HTTP; the others (redfish://, idrac-redfish://, ilo5-redfish://, which
// BMO boots through Ironic's iPXE, and ipmi://) leave it empty: virtual
// media where the BMC has it, else the network. The annotation wins.
func bootMethodOf(addr string, ann map[string]string) (string, error) {
	if v, ok := ann[AnnBootMethod]; ok {
		if v != "" && !oneOf(v, wire.BootMethods) {
			return "", fmt.Errorf("annotation %s %q is not one of %s", AnnBootMethod, v, strings.Join(wire.BootMethods, ", "))
		}
		return v, nil
	}
	scheme, _, ok := strings.Cut(strings.ToLower(addr), "://")
	if !ok {
		return "", nil
	}
	scheme, _, _ = strings.Cut(scheme, "+")
	switch {
	case strings.HasSuffix(scheme, "-virtualmedia"):
		return wire.BootMethodVirtualMedia, nil
	case scheme == "redfish-uefihttp":
		return wire.BootMethodUEFIHTTP, nil
	}
	return "", nil
}

func oneOf(v string, list []string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// exportAddress is the BMO bmc.address of a host: a redfish address with
// bootMethod vmedia or uefihttp takes the scheme that says so
// (redfish-virtualmedia, redfish-uefihttp; "+http" kept); pxe goes in
// AnnBootMethod.
func exportAddress(h wire.Host, ann map[string]string) string {
	scheme, rest, ok := strings.Cut(h.BMC.Address, "://")
	if !ok || (scheme != "redfish" && scheme != "redfish+http") {
		if h.BootMethod != "" {
			ann[AnnBootMethod] = h.BootMethod
		}
		return h.BMC.Address
	}
	suffix := strings.TrimPrefix(scheme, "redfish")
	switch h.BootMethod {
	case wire.BootMethodVirtualMedia:
		return "redfish-virtualmedia" + suffix + "://" + rest
	case wire.BootMethodUEFIHTTP:
		return "redfish-uefihttp" + suffix + "://" + rest
	case wire.BootMethodPXE:
		ann[AnnBootMethod] = h.BootMethod
	}
	return h.BMC.Address
}

// ironicBootMethods maps an Ironic node's boot_interface to a bootMethod
// (others: empty, chosen from what the BMC offers).
var ironicBootMethods = map[string]string{
	"redfish-virtual-media": wire.BootMethodVirtualMedia, "idrac-redfish-virtual-media": wire.BootMethodVirtualMedia,
	"pxe": wire.BootMethodPXE, "ipxe": wire.BootMethodPXE,
	"redfish-https": wire.BootMethodUEFIHTTP, "http": wire.BootMethodUEFIHTTP, "http-ipxe": wire.BootMethodPXE,
}
