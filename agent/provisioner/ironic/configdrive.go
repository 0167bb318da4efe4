package ironic

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/provisioner"
)

// The config drive and the ramdisk's network data (the host's userData,
// networkData, metaData and preprovisioningNetworkData, revealed by the
// agent): the deploy request carries a configdrive object (API 1.56+) and
// Ironic builds the config-2 ISO itself (stored gzip+base64 in
// instance_info.configdrive until the node is undeployed); the ramdisk's
// network data is the node's network_data field (API 1.66+).

// configDrive is the configdrive object of host h's deploy to node uuid:
// nil when the spec names no user, network or meta data. meta_data holds
// what BMO puts there (uuid, name, hostname, local-hostname,
// local_hostname), with the record's meta data merged over it.
func configDrive(h provisioner.Host, uuid string) (*nodes.ConfigDrive, error) {
	cd := h.ConfigDrive
	if cd == nil {
		return nil, nil
	}
	out := &nodes.ConfigDrive{MetaData: map[string]any{
		"uuid": uuid, "name": h.Name, "hostname": h.Name, "local-hostname": h.Name, "local_hostname": h.Name,
	}}
	if len(cd.MetaData) > 0 {
		var md map[string]any
		if err := json.Unmarshal(cd.MetaData, &md); err != nil {
			return nil, fmt.Errorf("%w: host %s: meta data is not a JSON object: %v", errclass.ErrFailed, h.Name, err)
		}
		maps.Copy(out.MetaData, md)
	}
	if len(cd.NetworkData) > 0 {
		if err := json.Unmarshal(cd.NetworkData, &out.NetworkData); err != nil {
			return nil, fmt.Errorf("%w: host %s: network data is not a JSON object: %v", errclass.ErrFailed, h.Name, err)
		}
	}
	if cd.UserData != nil {
		out.UserData = string(cd.UserData)
	}
	return out, nil
}

// networkDataPatch brings the node's network_data (the deploy ramdisk's
// network configuration) to the host's preprovisioningNetworkData: set
// when it differs, removed when the spec names none and the node has some.
func networkDataPatch(h provisioner.Host, n *nodes.Node) (nodes.UpdateOpts, error) {
	if h.PreprovisioningNetworkData == nil {
		if len(n.NetworkData) > 0 {
			return nodes.UpdateOpts{nodes.UpdateOperation{Op: nodes.RemoveOp, Path: "/network_data"}}, nil
		}
		return nil, nil
	}
	var nd map[string]any
	if err := json.Unmarshal(h.PreprovisioningNetworkData, &nd); err != nil {
		return nil, fmt.Errorf("%w: host %s: preprovisioning network data is not a JSON object: %v", errclass.ErrFailed, h.Name, err)
	}
	if sameDoc(n.NetworkData, nd) {
		return nil, nil
	}
	return nodes.UpdateOpts{nodes.UpdateOperation{Op: nodes.AddOp, Path: "/network_data", Value: nd}}, nil
}

// sameDoc compares two JSON documents by their canonical encoding.
func sameDoc(a, b map[string]any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
