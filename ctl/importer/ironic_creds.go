package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// ironicCreds is --credentials-file: BMC logins keyed by node name, node
// UUID or BMC address (Ironic's driver_info address or rackfence's), e.g.
//
//	node-1: {username: admin, password: s3cret}
//	4f5c0a1e-8d0b-4e8e-9f3a-0b7f2d1c9e11: {password: other}
//	"https://10.1.0.7": {username: root, password: calvin}
//
// username may be left out: driver_info's (redfish_username,
// ipmi_username) is used.
type ironicCreds map[string]ironicLogin

type ironicLogin struct {
	Username string `json:"username,omitempty"`
	Password string `json:"password"`
}

// ParseIronicCreds reads a credentials file (YAML or JSON); a bad entry is
// named with its field.
func ParseIronicCreds(data []byte) (ironicCreds, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("is not valid YAML or JSON: %v", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(js, &raw); err != nil {
		return nil, fmt.Errorf("must be an object: NAME|UUID|ADDRESS: {username: U, password: P}")
	}
	out := ironicCreds{}
	for k, v := range raw {
		var l ironicLogin
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			msg := strings.TrimPrefix(err.Error(), "json: ")
			if f, ok := strings.CutPrefix(msg, "unknown field "); ok {
				return nil, fmt.Errorf("entry %q: field %s is not username or password", k, f)
			}
			return nil, fmt.Errorf("entry %q: %s (want {username: U, password: P})", k, msg)
		}
		if l.Password == "" {
			return nil, fmt.Errorf("entry %q: field password is required", k)
		}
		out[k] = l
	}
	return out, nil
}
