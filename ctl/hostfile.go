package ctl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/rackfence/rackfence/ctl/importer"
	"github.com/rackfence/rackfence/shared/wire"
)

// maxHostFile bounds an input file (a few thousand hosts fit easily).
const maxHostFile = 64 << 20

// inputFile is one -f file read into memory (standard input can be read
// only once).
type inputFile struct {
	name string
	data []byte
}

// parseHostFile parses one file of rackfence hosts: YAML documents, a JSON
// array or object, or a list {"items": [...]}. Every host is validated; a
// bad one is a usage error naming the file, the document and the field.
func parseHostFile(x *Ctx, in inputFile) ([]wire.Host, error) {
	hosts, err := parseHosts(in.data, func(msg string) { fmt.Fprintf(x.io.Stderr, "warning: %s: %s\n", in.name, msg) })
	if err != nil {
		return nil, usagef("%s: %v", in.name, err)
	}
	return hosts, nil
}

// readInputFile reads path ('-' = stdin), bounded by maxHostFile; name is
// how messages call it.
func readInputFile(x *Ctx, path string) (data []byte, name string, err error) {
	var r io.Reader
	name = path
	if path == "-" {
		r, name = x.io.Stdin, "standard input"
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, name, usagef("cannot read -f %s: %v", path, err)
		}
		defer f.Close()
		r = f
	}
	data, err = io.ReadAll(io.LimitReader(r, maxHostFile+1))
	if err != nil {
		return nil, name, usagef("cannot read %s: %v", name, err)
	}
	if len(data) > maxHostFile {
		return nil, name, usagef("%s is larger than %d MiB", name, maxHostFile>>20)
	}
	return data, name, nil
}

// parseHosts decodes and validates the hosts of one file. warn receives
// non-fatal remarks (unknown fields).
func parseHosts(data []byte, warn func(string)) ([]wire.Host, error) {
	var out []wire.Host
	docs := importer.DocSep.Split(string(data), -1)
	for i, doc := range docs {
		if importer.IsBlankYAML(doc) {
			continue
		}
		where := ""
		if len(docs) > 1 {
			where = fmt.Sprintf("document %d: ", i+1)
		}
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("%sis not valid YAML or JSON: %v", where, err)
		}
		raws, _, err := importer.DocumentItems(js)
		switch {
		case errors.Is(err, importer.ErrNotObject):
			return nil, fmt.Errorf("%sexpected a host object, a list of hosts or {\"items\": [...]}", where)
		case err != nil:
			return nil, fmt.Errorf("%s%v", where, err)
		}
		for j, raw := range raws {
			w := where
			if len(raws) > 1 {
				w += fmt.Sprintf("item %d: ", j+1)
			}
			h, err := decodeHost(raw, func(m string) { warn(w + m) })
			if err != nil {
				return nil, fmt.Errorf("%s%v", w, err)
			}
			if h.Name != "" {
				w += "host " + h.Name + ": "
			}
			if err := wire.ValidateHost(&h, h.Name); err != nil {
				var fe *wire.FieldError
				if errors.As(err, &fe) {
					return nil, fmt.Errorf("%sfield %s %s", w, fe.Field, fe.Message)
				}
				return nil, fmt.Errorf("%s%v", w, err)
			}
			out = append(out, h)
		}
	}
	return out, nil
}

// decodeHost decodes strictly first, so a misspelt field is reported; an
// unknown field is only a warning (a newer coordinator may add fields).
func decodeHost(raw []byte, warn func(string)) (wire.Host, error) {
	var h wire.Host
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(&h)
	if err == nil {
		return h, nil
	}
	if strings.Contains(err.Error(), "unknown field") {
		warn(strings.TrimPrefix(err.Error(), "json: ") + " (ignored; check its spelling)")
		h = wire.Host{}
		err = json.Unmarshal(raw, &h)
	}
	if err != nil {
		return h, fmt.Errorf("not a host: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	return h, nil
}
