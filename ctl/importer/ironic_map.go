package importer

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/rackfence/rackfence/shared/wire"
)

// ironicNode is the part of an Ironic node (GET /v1/nodes?fields=...) the
// import reads.
type ironicNode struct {
	UUID              string         `json:"uuid"`
	Name              string         `json:"name"`
	Driver            string         `json:"driver"`
	DriverInfo        map[string]any `json:"driver_info"`
	ProvisionState    string         `json:"provision_state"`
	PowerState        string         `json:"power_state"`
	Maintenance       bool           `json:"maintenance"`
	MaintenanceReason string         `json:"maintenance_reason"`
	Properties        map[string]any `json:"properties"`
	InstanceInfo      map[string]any `json:"instance_info"`
	Extra             map[string]any `json:"extra"`
	AutomatedClean    *bool          `json:"automated_clean"`
	BootInterface     string         `json:"boot_interface"`
}

// ironicPort is one port (GET /v1/ports?fields=...).
type ironicPort struct {
	Address    string `json:"address"`
	NodeUUID   string `json:"node_uuid"`
	PXEEnabled *bool  `json:"pxe_enabled"`
}

// IronicOptions are import ironic's mapping flags.
type IronicOptions struct {
	Rack     string // --rack
	RackFrom string // --rack-from properties.KEY | extra.KEY
	Creds    ironicCreds
}

// How import ironic treats provision states: adopted as they run,
// registered, or skipped. An active node arrives externally provisioned,
// as Ironic's own "Active Node Creation" (adopt) takes over a running
// fleet: never redeployed. enroll is registered too: Ironic never checked
// its BMC, and the rack agent checks it when it registers the host.
var (
	ironicAdopted    = map[string]bool{"active": true}
	ironicRegistered = map[string]bool{"available": true, "manageable": true, "enroll": true}
)

// ironicSource names a node in the plan.
func ironicSource(n ironicNode) string {
	if n.Name == "" {
		return "node " + n.UUID
	}
	return "node " + n.Name + " (" + n.UUID + ")"
}

// ConvertIronic turns Ironic's nodes and ports into a plan input: hosts,
// credentials records, refused nodes (with why) and skipped ones (with
// their state).
func ConvertIronic(nodes []ironicNode, ports []ironicPort, o IronicOptions) (in *Input, skipped []string) {
	in = &Input{Records: map[string]wire.Credentials{}}
	byNode := map[string][]ironicPort{}
	for _, p := range ports {
		byNode[p.NodeUUID] = append(byNode[p.NodeUUID], p)
	}
	sort.Slice(nodes, func(i, j int) bool { return hostNameOf(nodes[i]) < hostNameOf(nodes[j]) })
	usedCreds := map[string]bool{}
	hostFrom := map[string]string{}
	recordFrom := map[string]string{}
	for _, n := range nodes {
		src := ironicSource(n)
		if !ironicAdopted[n.ProvisionState] && !ironicRegistered[n.ProvisionState] {
			skipped = append(skipped, fmt.Sprintf("%s: provision state %q; only active, available, manageable and enroll nodes are imported: let Ironic settle it and run the import again", src, n.ProvisionState))
			continue
		}
		ph, key, errs := mapIronicNode(n, byNode[n.UUID], o)
		ph.Source = src
		if prev, ok := hostFrom[ph.Host.Name]; ok {
			errs = append(errs, fmt.Sprintf("host name %q is also that of %s", ph.Host.Name, prev))
		}
		hostFrom[ph.Host.Name] = src
		if len(errs) == 0 && ph.Host.BMC.Address != "" {
			rn := recordNameFor(ph.Host.Name)
			if prev, ok := recordFrom[rn]; ok {
				errs = append(errs, fmt.Sprintf("credentials record %q would also be that of %s", rn, prev))
			}
			recordFrom[rn] = src
			ph.Host.BMC.Credentials = rn
			ph.Secrets = []string{rn}
			if key != "" {
				usedCreds[key] = true
				c := o.Creds[key]
				user := c.Username
				if user == "" {
					user = ironicUsername(n)
				}
				if user == "" {
					errs = append(errs, fmt.Sprintf("credentials file entry %q has no username and driver_info has none either: add username to the entry", key))
				}
				in.Records[rn] = wire.Credentials{Name: rn, Username: user, Password: c.Password}
			}
		}
		if len(errs) == 0 {
			if err := wire.ValidateHost(&ph.Host, ph.Host.Name); err != nil {
				var fe *wire.FieldError
				if errors.As(err, &fe) {
					errs = append(errs, fmt.Sprintf("mapped host field %s %s", fe.Field, fe.Message))
				} else {
					errs = append(errs, err.Error())
				}
			}
		}
		if len(errs) > 0 {
			in.refuse(src, errs...)
			continue
		}
		for _, note := range ph.notes {
			in.Notes = append(in.Notes, src+": "+note)
		}
		in.Hosts = append(in.Hosts, *ph)
	}
	var unused []string
	for k := range o.Creds {
		if !usedCreds[k] {
			unused = append(unused, k)
		}
	}
	sort.Strings(unused)
	for _, k := range unused {
		in.Notes = append(in.Notes, fmt.Sprintf("credentials file entry %q matches no imported node", k))
	}
	in.MissingWhy = func(records []string) string {
		return fmt.Sprintf("no credentials: the credentials file has no entry for the node's name, UUID or BMC address, and credentials record %s does not exist; add an entry (username, password) to --credentials-file, create the record (rackfencectl credentials set %s), or pass --allow-missing-credentials",
			strings.Join(records, ", "), records[0])
	}
	return in, skipped
}

// hostNameOf is the rackfence host name of a node: its name when that is a
// valid rackfence name, else its UUID (lower-case hex and '-', valid).
func hostNameOf(n ironicNode) string {
	if n.Name != "" && wire.ValidateName("name", n.Name) == nil {
		return n.Name
	}
	return strings.ToLower(n.UUID)
}

// recordNameFor names the credentials record of a host: NAME-bmc, or
// NAME itself when that would be longer than 63 characters.
func recordNameFor(host string) string {
	if len(host)+4 <= 63 {
		return host + "-bmc"
	}
	return host
}

// mapIronicNode maps one node; key is the credentials file entry used ("":
// none found).
func mapIronicNode(n ironicNode, ports []ironicPort, o IronicOptions) (ph *PlannedHost, key string, errs []string) {
	ph = &PlannedHost{}
	h := &ph.Host
	h.Name = hostNameOf(n)
	if n.Name != "" && h.Name != n.Name {
		ph.notes = append(ph.notes, fmt.Sprintf("name %q is not a valid rackfence name (lower-case letters, digits, '-'): imported as %s", n.Name, h.Name))
	}
	rack, err := ironicRack(n, o)
	if err != nil {
		errs = append(errs, err.Error())
	}
	h.Rack = rack
	addr, ironicAddr, insecure, notes, err := ironicBMC(n)
	if err != nil {
		errs = append(errs, err.Error())
	}
	ph.notes = append(ph.notes, notes...)
	h.BMC.Address = addr
	h.BMC.DisableCertificateVerification = insecure
	for _, k := range []string{n.UUID, n.Name, addr, ironicAddr} {
		if _, ok := o.Creds[k]; ok && k != "" {
			key = k
			break
		}
	}
	h.ExternallyProvisioned = ironicAdopted[n.ProvisionState]
	h.Online = n.PowerState == "power on"
	if n.ProvisionState == "enroll" {
		ph.notes = append(ph.notes, "enroll: Ironic never verified its BMC; the rack agent registers it like a new host")
	}
	if n.Maintenance {
		why := n.MaintenanceReason
		if why == "" {
			why = "no reason given"
		}
		ph.notes = append(ph.notes, fmt.Sprintf("in Ironic's maintenance mode (%s): imported and managed by rackfence; 'rackfencectl drain %s --mode maintenance' keeps power actions off it", why, h.Name))
	}
	if n.AutomatedClean != nil {
		h.AutomatedCleaningMode = wire.CleaningDisabled
		if *n.AutomatedClean {
			h.AutomatedCleaningMode = wire.CleaningMetadata
		}
	}
	mac, note := bootMAC(ports)
	h.BootMACAddress = mac
	if note != "" {
		ph.notes = append(ph.notes, note)
	}
	if rd, ok := n.Properties["root_device"]; ok && rd != nil {
		hints, err := ironicRootHints(rd)
		if err != nil {
			errs = append(errs, err.Error())
		}
		h.RootDeviceHints = hints
	}
	mode, err := bootModeOf(n.Properties["capabilities"])
	if err != nil {
		errs = append(errs, err.Error())
	}
	h.BootMode = mode
	h.BootMethod = ironicBootMethods[n.BootInterface]
	img, notes := ironicImage(n.InstanceInfo)
	h.Image = img
	ph.notes = append(ph.notes, notes...)
	labels, notes := extraLabels(n.Extra)
	h.Labels = labels
	ph.notes = append(ph.notes, notes...)
	return ph, key, errs
}

// ironicRack reads the rack from --rack-from (properties.KEY, extra.KEY),
// falling back to --rack.
func ironicRack(n ironicNode, o IronicOptions) (string, error) {
	if o.RackFrom == "" {
		if o.Rack == "" {
			return "", fmt.Errorf("no rack: give --rack R or --rack-from properties.KEY|extra.KEY")
		}
		return o.Rack, nil
	}
	root, key, _ := strings.Cut(o.RackFrom, ".")
	m := n.Properties
	if root == "extra" {
		m = n.Extra
	}
	v, ok := m[key].(string)
	if !ok || v == "" {
		if o.Rack != "" {
			return o.Rack, nil
		}
		if _, there := m[key]; there {
			return "", fmt.Errorf("%s is not a string: the rack must be a name like r1", o.RackFrom)
		}
		return "", fmt.Errorf("%s is not set (--rack-from) and no --rack was given", o.RackFrom)
	}
	if err := wire.ValidateName(o.RackFrom, v); err != nil {
		return "", fmt.Errorf("rack from %v", err)
	}
	return v, nil
}
