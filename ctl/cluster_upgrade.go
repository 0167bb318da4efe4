package ctl

import (
	"fmt"
	"strings"

	"github.com/rackfence/rackfence/shared/wire"
)

// upgradeLines adds the version gate's view to cluster status: the
// cluster's effective version, the members still to upgrade, and the last
// state hash comparison (leader only).
func upgradeLines(k *kv, u *wire.UpgradeStatus) {
	if u == nil {
		return
	}
	k.add("Effective version", u.EffectiveVersion)
	for _, l := range u.Lagging {
		k.add("To upgrade", fmt.Sprintf("%s (%s): lacks command types %s", l.ID, l.Version, strings.Join(l.Missing, ", ")))
	}
	c := u.HashCheck
	if c == nil {
		return
	}
	line := fmt.Sprintf("at index %d, %s:", c.Index, c.At)
	if len(c.Matching) > 0 {
		line += " match " + strings.Join(c.Matching, ",")
	}
	if len(c.Mismatched) > 0 {
		line += " DIFFER " + strings.Join(c.Mismatched, ",")
	}
	if len(c.Unknown) > 0 {
		line += " unknown " + strings.Join(c.Unknown, ",")
	}
	k.add("State hashes", line)
}
