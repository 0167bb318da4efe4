package main

import (
	"fmt"
	"strconv"
	"strings"
)

// sizeUnits are the suffixes parseSize accepts, longest first.
var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1},
}

// parseSize parses a byte size: a whole number with an optional unit
// (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), e.g. 20GiB.
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a positive size: give a whole number with a unit, e.g. 20GiB or 500MiB", s)
	}
	return n * mult, nil
}
