package api

import (
	"regexp"
	"slices"
	"sort"
	"strconv"
	"testing"

	"github.com/rackfence/rackfence/shared/wire"
)

// TestWireErrorsMatchOpenAPI: the codes of shared/wire's wire-error table
// are exactly openapi.yaml's ErrorDetail.code enum, and every "(code X"
// an error response's description names is answered with the table's
// status for X. Code internal is the one code documented under other 5xx
// statuses too (a 503 from a member without its audit trail, the 504
// "may have been applied").
func TestWireErrorsMatchOpenAPI(t *testing.T) {
	sp := loadSpec(t)
	detail, _, err := sp.deref(map[string]any{"$ref": "#/components/schemas/ErrorDetail"}, "ErrorDetail")
	if err != nil {
		t.Fatal(err)
	}
	code := detail["properties"].(map[string]any)["code"].(map[string]any)
	var enum []string
	for _, v := range code["enum"].([]any) {
		enum = append(enum, v.(string))
	}
	var table []string
	for _, e := range wire.WireErrors {
		table = append(table, e.Code)
	}
	sort.Strings(enum)
	sort.Strings(table)
	if len(enum) != len(table) {
		t.Errorf("openapi.yaml's code enum %v, the table %v", enum, table)
	} else {
		for i := range enum {
			if enum[i] != table[i] {
				t.Errorf("openapi.yaml's code enum %v, the table %v", enum, table)
				break
			}
		}
	}

	named := regexp.MustCompile(`\(code\s+([a-z_]+)`)
	checked := map[string]bool{}
	for path, item := range sp.doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			opm, ok := op.(map[string]any)
			if !ok {
				continue
			}
			resps, _ := opm["responses"].(map[string]any)
			for st, r := range resps {
				status, err := strconv.Atoi(st)
				if err != nil || status < 400 {
					continue
				}
				rm, _, err := sp.deref(r.(map[string]any), path+" "+method+" "+st)
				if err != nil {
					t.Fatal(err)
				}
				desc, _ := rm["description"].(string)
				for _, m := range named.FindAllStringSubmatch(desc, -1) {
					c := m[1]
					if !slices.ContainsFunc(wire.WireErrors, func(e *wire.WireError) bool { return e.Code == c }) {
						t.Errorf("%s %s %d names code %s, which the table does not have", method, path, status, c)
						continue
					}
					checked[c] = true
					if want := wire.StatusForCode(c); want != status && !(c == wire.CodeInternal && status >= 500) {
						t.Errorf("%s %s documents code %s under %d; the table answers it with %d", method, path, c, status, want)
					}
				}
			}
		}
	}
	for _, e := range wire.WireErrors {
		if !checked[e.Code] {
			t.Errorf("no error response of openapi.yaml names code %s", e.Code)
		}
	}
}
