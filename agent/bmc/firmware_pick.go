package bmc

import "strings"

// FindFirmware picks the inventory item a spec's firmware component names:
// "bmc" is the item whose RelatedItem is a Manager, "bios" the one related
// to a Bios (or, failing that, a System); "nic:ID" and anything else is an
// item's Id, URI or Name. ok is false when none matches.
func FindFirmware(items []FirmwareItem, component string) (FirmwareItem, bool) {
	switch component {
	case "bmc":
		return related(items, "/Managers/")
	case "bios":
		if it, ok := related(items, "/Bios"); ok {
			return it, true
		}
		return related(items, "/Systems/")
	}
	return findItem(items, strings.TrimPrefix(component, "nic:"))
}

func related(items []FirmwareItem, part string) (FirmwareItem, bool) {
	for _, it := range items {
		for _, r := range it.RelatedItems {
			if strings.Contains(r, part) {
				return it, true
			}
		}
	}
	return FirmwareItem{}, false
}

// VersionMatches says whether an item showing version have is at version
// want, as FinishUpdate judges it (whole, or a word of it: iLO shows
// "U46 v1.80 (date)"). An empty want never matches.
func VersionMatches(have, want string) bool {
	return want != "" && versionIs(have, &Update{Version: want})
}
