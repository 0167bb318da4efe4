package agent

import (
	"net/url"
	"strings"
)

// Hosts sharing a BMC (blades of an enclosure) each keep a subscription
// there, and such a BMC posts every event to each of them. A record whose
// OriginOfCondition names a ComputerSystem makes a power read due only
// for the host whose BMC address names that system; a record naming no
// system (the chassis, the manager, none), or a host whose address names
// none (the service's only system), reads the power as before.

// systemOf returns the ComputerSystem ID that a Redfish URI or a BMC
// address names (…/Systems/ID, or a resource under it); "" when it names
// none.
func systemOf(uri string) string {
	if u, err := url.Parse(uri); err == nil {
		uri = u.EscapedPath()
	}
	const seg = "/Systems/"
	i := strings.Index(uri, seg)
	if i < 0 {
		return ""
	}
	id := uri[i+len(seg):]
	if j := strings.IndexByte(id, '/'); j >= 0 {
		id = id[:j]
	}
	if un, err := url.PathUnescape(id); err == nil {
		id = un
	}
	return id
}

// forOtherSystem reports whether origin (a record's OriginOfCondition)
// names a system other than system (the host's; "" when its address
// names none).
func forOtherSystem(origin, system string) bool {
	if system == "" {
		return false
	}
	o := systemOf(origin)
	return o != "" && o != system
}
