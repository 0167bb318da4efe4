package api

import (
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// unknownFieldPath finds where in body the key name stands that target's
// type does not have (encoding/json names only the key): "userData.key",
// "items[2].labelz". It walks the decoded JSON beside the Go type, matching
// keys as encoding/json does (case-insensitively); "" when not found.
func unknownFieldPath(body []byte, target any, name string) string {
	var doc any
	if json.Unmarshal(body, &doc) != nil {
		return ""
	}
	p, _ := walkUnknown(doc, reflect.TypeOf(target), "", name)
	return p
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

func walkUnknown(v any, t reflect.Type, prefix, name string) (string, bool) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || reflect.PointerTo(t).Implements(unmarshalerType) {
		return "", false
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		fields := jsonFields(t)
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ft, known := fields[strings.ToLower(k)]
			if !known {
				if k == name {
					return join(prefix, k), true
				}
				continue
			}
			if p, ok := walkUnknown(obj[k], ft, join(prefix, k), name); ok {
				return p, true
			}
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		for k, e := range obj {
			if p, ok := walkUnknown(e, t.Elem(), join(prefix, k), name); ok {
				return p, true
			}
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			return "", false
		}
		for i, e := range arr {
			if p, ok := walkUnknown(e, t.Elem(), prefix+"["+strconv.Itoa(i)+"]", name); ok {
				return p, true
			}
		}
	}
	return "", false
}

// jsonFields maps the lower-cased JSON names of t's fields (embedded
// structs flattened, as encoding/json does) to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		n, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && n == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				for k, v := range jsonFields(et) {
					if _, ok := out[k]; !ok {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if n == "" {
			n = f.Name
		}
		out[strings.ToLower(n)] = f.Type
	}
	return out
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}
