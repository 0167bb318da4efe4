// Package configdrive builds OpenStack config drives (the "config-2"
// layout cloud-init, Ignition and glean read) in pure Go: an ISO 9660
// image labelled config-2 with Rock Ridge names holding
//
//	openstack/latest/meta_data.json     uuid, name, hostname (and public_keys
//	                                    when the given meta data has them),
//	                                    merged with the given meta data
//	openstack/latest/user_data          the user data as given (when any)
//	openstack/latest/network_data.json  the network data as given (when any)
//
// The direct provisioner inserts it as a second virtual media device; the
// Ironic provisioner passes the same content to Ironic, which builds its own.
package configdrive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/rackfence/rackfence/agent/provisioner"
)

// Label is the volume label cloud-init looks for.
const Label = "config-2"

// Paths of the files on the drive.
const (
	MetaDataPath    = "openstack/latest/meta_data.json"
	UserDataPath    = "openstack/latest/user_data"
	NetworkDataPath = "openstack/latest/network_data.json"
)

// Input is what one host's drive holds.
type Input struct {
	// UUID, Name and Hostname are meta_data.json's uuid, name and
	// hostname unless the given meta data sets them.
	UUID, Name, Hostname string
	// Content is the revealed user, network and meta data.
	Content provisioner.ConfigDrive
	// Time is every record's date. Zero: the Unix epoch, so the same
	// content always gives the same bytes (a retried provision publishes
	// the same drive under the same URL).
	Time time.Time
}

// MetaData returns meta_data.json: uuid, name and hostname, overridden by
// the keys of the given meta data (a JSON object; public_keys passes
// through as given).
func MetaData(in Input) ([]byte, error) {
	md := map[string]any{"uuid": in.UUID, "name": in.Name, "hostname": in.Hostname}
	if len(bytes.TrimSpace(in.Content.MetaData)) > 0 {
		var given map[string]any
		if err := json.Unmarshal(in.Content.MetaData, &given); err != nil || given == nil {
			return nil, fmt.Errorf("%w: metaData must be a JSON object (the record's metaData key), e.g. {\"public_keys\": {\"admin\": \"ssh-ed25519 …\"}}", ErrInvalid)
		}
		for k, v := range given {
			md[k] = v
		}
	}
	return json.MarshalIndent(md, "", "  ")
}

// Build returns the config drive image of in.
func Build(in Input) ([]byte, error) {
	md, err := MetaData(in)
	if err != nil {
		return nil, err
	}
	files := []isoFile{{path: MetaDataPath, data: md}}
	if in.Content.UserData != nil {
		files = append(files, isoFile{path: UserDataPath, data: in.Content.UserData})
	}
	if nd := in.Content.NetworkData; nd != nil {
		if !json.Valid(nd) {
			return nil, fmt.Errorf("%w: networkData must be JSON (OpenStack network_data.json: links, networks, services)", ErrInvalid)
		}
		files = append(files, isoFile{path: NetworkDataPath, data: nd})
	}
	t := in.Time
	if t.IsZero() {
		t = time.Unix(0, 0)
	}
	return writeISO(Label, files, t)
}
