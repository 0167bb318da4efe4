package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
)

// The YAML documents of an input file, read alike by host apply's
// rackfence hosts (ctl/hostfile.go) and metal3 documents (SplitObjects).

// DocSep splits a file into its YAML documents at "---" lines.
var DocSep = regexp.MustCompile(`(?m)^---[ \t]*(#.*)?$`)

// ErrNotObject: a document is neither an object, a list nor null.
var ErrNotObject = errors.New("not an object or a list")

// DocumentItems splits one YAML document (as JSON) into its objects: the
// elements of a list, the items of a {"items": [...]} object (a Kubernetes
// List), or the object itself; none for null. listed is true when they came
// from a list or items.
func DocumentItems(js []byte) (raws []json.RawMessage, listed bool, err error) {
	js = bytes.TrimSpace(js)
	switch {
	case string(js) == "null":
		return nil, false, nil
	case len(js) > 0 && js[0] == '[':
		if err := json.Unmarshal(js, &raws); err != nil {
			return nil, false, err
		}
		return raws, true, nil
	case len(js) > 0 && js[0] == '{':
		var probe struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(js, &probe); err == nil && probe.Items != nil {
			return probe.Items, true, nil
		}
		return []json.RawMessage{js}, false, nil
	}
	return nil, false, ErrNotObject
}

// IsBlankYAML says whether doc holds nothing but blank lines and comments.
func IsBlankYAML(doc string) bool {
	for _, l := range strings.Split(doc, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}
