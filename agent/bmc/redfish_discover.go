package bmc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stmcginnis/gofish/common"
	"github.com/stmcginnis/gofish/redfish"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/shared/wire"
)

// Redfish discovery: which system this Conn drives, its managers, where its
// virtual media lives and how it is driven, and what the BMC says it is.
// Everything is found by following links from the service root and the
// system, never by fixed paths; what was found is kept per Conn
// (Conn.disc), so later calls do not discover again.

// rfLink is an OData link.
type rfLink struct {
	ID string `json:"@odata.id"`
}

type rfCollection struct{ Members []rfLink }

// rfSystemDoc is what discovery and inventory read of a ComputerSystem.
type rfSystemDoc struct {
	ID                          string `json:"Id"`
	Manufacturer, Model, UUID   string
	SerialNumber, BiosVersion   string
	PowerState                  string
	Boot                        rfBootDoc
	MemorySummary               struct{ TotalSystemMemoryGiB float64 }
	Processors, Memory, Storage rfNavCollection
	SimpleStorage               rfNavCollection
	EthernetInterfaces          rfNavCollection
	VirtualMedia                rfLink
	Links                       struct{ ManagedBy []rfLink }
}

type rfBootDoc struct {
	BootSourceOverrideMode *string
	Modes                  []string `json:"BootSourceOverrideMode@Redfish.AllowableValues"`
	Targets                []string `json:"BootSourceOverrideTarget@Redfish.AllowableValues"`
}

// rfBootProps is the system's Boot as a property list (HttpBootUri is
// listed as null while unset, which a typed field cannot tell from
// absent).
type rfBootProps struct {
	Boot map[string]json.RawMessage
}

// rfManagerDoc is what discovery reads of a Manager.
type rfManagerDoc struct {
	Manufacturer, Model, FirmwareVersion string
	VirtualMedia                         rfLink
}

// rfDiscovery is what a Conn learnt about its Redfish service.
type rfDiscovery struct {
	redfishVersion, vendor string
	system                 string   // the system this Conn drives
	managers               []string // its Links.ManagedBy
	bootModes              []string // BootSourceOverrideMode@Redfish.AllowableValues, else the current mode
	bootModeAllowed        []string // the allowable values alone
	bootModeProp           bool     // the system has BootSourceOverrideMode
	bootTargets            []string // BootSourceOverrideTarget@Redfish.AllowableValues
	httpBootURI            bool     // the system's Boot has HttpBootUri
	sysVirtualMedia        string   // the system's VirtualMedia collection link
	// query: the $expand and $select the service offers (redfish_query.go).
	query *rfQuery

	manager    *rfManagerDoc // the first manager, once read
	vmediaDone bool          // the search below ran
	vmedia     string        // the device taking CD or DVD, "" if none
	vmediaAct  bool          // it has the InsertMedia action
	noVMedia   string        // the message when there is none
	// drive is a second device of the same collection for a config drive
	// (USBStick first, then Floppy, then another CD or DVD), "" if none;
	// noDrive says what was searched.
	drive   string
	noDrive string
	// chassisDepth is how many levels health's chassis read expands
	// (0: not known yet, chassisLevels): 1 once a read found the legacy
	// Thermal and Power, which the first level carries inline.
	chassisDepth atomic.Int32
}

// rfGet GETs path and decodes the body into every one of into; gofish
// entities among them get the ETag and the client (for their mutations,
// which send If-Match with that ETag).
func rfGet(c common.Client, path string, into ...any) error {
	if path == "" {
		return fmt.Errorf("%w: empty Redfish link", errclass.ErrFailed)
	}
	if !strings.HasPrefix(path, "/") {
		return fmt.Errorf("%w: unexpected Redfish link %q", errclass.ErrFailed, path)
	}
	resp, err := c.Get(path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return err
	}
	for _, x := range into {
		if err := json.Unmarshal(body, x); err != nil {
			return fmt.Errorf("%w: %s: %v", errclass.ErrFailed, path, err)
		}
		if e, ok := x.(interface {
			SetETag(string)
			SetClient(common.Client)
		}); ok {
			e.SetETag(resp.Header.Get("ETag"))
			e.SetClient(c)
		}
	}
	return nil
}

// isNotFound: the BMC answered 404 (a link to nothing).
func isNotFound(err error) bool {
	var ge *common.Error
	return errors.As(err, &ge) && ge.HTTPReturnedStatusCode == http.StatusNotFound
}

// short is a resource path without /redfish/v1/, as messages show it.
func short(p string) string { return strings.TrimPrefix(p, "/redfish/v1/") }

// discover finds the system (cached). c.mu held (inside rfCall).
func (c *Conn) discover(s *rfSession) (*rfDiscovery, error) {
	if c.disc != nil {
		return c.disc, nil
	}
	d := &rfDiscovery{query: &rfQuery{}}
	if svc := s.api.Service; svc != nil {
		d.redfishVersion, d.vendor = svc.RedfishVersion, svc.Vendor
		d.query = newRFQuery(svc.ProtocolFeaturesSupported)
	}
	d.system = c.addressSystem()
	if d.system == "" {
		var col rfCollection
		if err := rfGet(s.api, "/redfish/v1/Systems", &col); err != nil {
			return nil, err
		}
		switch len(col.Members) {
		case 0:
			return nil, fmt.Errorf("%w: the Redfish service at %s lists no system", errclass.ErrFailed, c.addr)
		case 1:
			d.system = col.Members[0].ID
		default:
			var ids []string
			for _, m := range col.Members {
				ids = append(ids, m.ID)
			}
			return nil, fmt.Errorf("%w: the Redfish service at %s serves %d systems (%s) and the address names none: put the host's system path in bmc.address, e.g. redfish://%s%s",
				errclass.ErrFailed, c.addr, len(ids), strings.Join(ids, ", "), c.addr, ids[0])
		}
	}
	var sys rfSystemDoc
	var props rfBootProps
	var hs rfHealthSystem
	if err := rfGet(s.api, d.system, &sys, &props, &hs); err != nil {
		return nil, err
	}
	c.healthSys.keep(&hs)
	_, d.httpBootURI = props.Boot["HttpBootUri"]
	d.bootTargets = sys.Boot.Targets
	c.freshSys = &sys
	c.invSys.keep(&sys)
	for _, m := range sys.Links.ManagedBy {
		d.managers = append(d.managers, m.ID)
	}
	d.sysVirtualMedia = sys.VirtualMedia.ID
	d.bootModeProp = sys.Boot.BootSourceOverrideMode != nil
	d.bootModeAllowed = sys.Boot.Modes
	d.bootModes = slices.Clone(sys.Boot.Modes)
	if len(d.bootModes) == 0 && sys.Boot.BootSourceOverrideMode != nil && *sys.Boot.BootSourceOverrideMode != "" {
		d.bootModes = []string{*sys.Boot.BootSourceOverrideMode}
	}
	c.disc = d
	return d, nil
}

// systemDoc reads the system: the document discovery read in this same
// call when there is one (one round trip less on a Conn's first call),
// else a fresh GET.
func (c *Conn) systemDoc(s *rfSession, d *rfDiscovery) (*rfSystemDoc, error) {
	if sys := c.freshSys; sys != nil {
		c.freshSys = nil
		return sys, nil
	}
	var sys rfSystemDoc
	if err := rfGet(s.api, d.system, &sys); err != nil {
		return nil, err
	}
	return &sys, nil
}

// managerDoc reads the system's first manager (cached).
func (c *Conn) managerDoc(s *rfSession, d *rfDiscovery) (*rfManagerDoc, error) {
	if d.manager != nil || len(d.managers) == 0 {
		return d.manager, nil
	}
	var m rfManagerDoc
	if err := rfGet(s.api, d.managers[0], &m); err != nil {
		return nil, err
	}
	d.manager = &m
	c.invMgr.keep(&m)
	return d.manager, nil
}

// findVirtualMedia looks for the device an image goes in (cached): the
// system's VirtualMedia first, then that of each manager of the system
// (Links.ManagedBy); the first resource whose MediaTypes has CD or DVD.
// None: d.noVMedia names the resources looked at.
func (c *Conn) findVirtualMedia(s *rfSession, d *rfDiscovery) error {
	if d.vmediaDone {
		return nil
	}
	looked := []string{short(d.system)}
	// The first manager is read meanwhile (Details needs it, and it is the
	// next place to look): one round trip less when the system has none.
	var (
		mgr    rfManagerDoc
		mgrErr error
		mgrGot = make(chan struct{})
	)
	if d.manager == nil && len(d.managers) > 0 {
		go func() {
			defer close(mgrGot)
			mgrErr = rfGet(s.api, d.managers[0], &mgr)
		}()
	} else {
		close(mgrGot)
	}
	ok, err := c.pickVirtualMedia(s, d, d.sysVirtualMedia)
	<-mgrGot
	if d.manager == nil && len(d.managers) > 0 && mgrErr == nil {
		d.manager = &mgr
		c.invMgr.keep(&mgr)
	}
	if err != nil || ok {
		d.vmediaDone = err == nil
		return err
	}
	for i, mp := range d.managers {
		looked = append(looked, short(mp))
		var m rfManagerDoc
		if i == 0 {
			mm, err := c.managerDoc(s, d)
			if err != nil {
				return err
			}
			m = *mm
		} else if err := rfGet(s.api, mp, &m); err != nil {
			return err
		}
		if ok, err := c.pickVirtualMedia(s, d, m.VirtualMedia.ID); err != nil || ok {
			d.vmediaDone = err == nil
			return err
		}
	}
	d.vmediaDone = true
	d.noVMedia = "no virtual media device taking CD or DVD under " + strings.Join(looked, " or ")
	return nil
}

// pickVirtualMedia reads a VirtualMedia collection and picks its first
// device taking CD or DVD. A missing collection (no link, 404) has none.
// The collection is read expanded one level where the service offers it
// (its devices inline: one GET instead of one per device); an answer
// without them inline, or with fewer than Members@odata.count, is read
// as before.
func (c *Conn) pickVirtualMedia(s *rfSession, d *rfDiscovery, collection string) (bool, error) {
	if collection == "" {
		return false, nil
	}
	var col rfCountedCollection
	err := c.getExpanded(s, d, collection, 1, &col)
	if err == nil && col.Count != nil && *col.Count > len(col.Members) {
		col = rfCountedCollection{}
		err = rfGet(s.api, collection, &col)
	}
	if err != nil {
		if isNotFound(err) {
			return false, nil
		}
		return false, err
	}
	// The members not inline are read in parallel; the first taking CD or
	// DVD, in the collection's order, is the device.
	vms := make([]redfish.VirtualMedia, len(col.Members))
	errs := make([]error, len(col.Members))
	var wg sync.WaitGroup
	for i, m := range col.Members {
		if m.raw != nil {
			errs[i] = load(s, m, &vms[i])
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = rfGet(s.api, m.ID, &vms[i])
		}()
	}
	wg.Wait()
	for i, m := range col.Members {
		if errs[i] != nil {
			if isNotFound(errs[i]) {
				continue
			}
			return false, errs[i]
		}
		if takesCD(vms[i].MediaTypes) {
			d.vmedia, d.vmediaAct = m.ID, vms[i].SupportsMediaInsert
			d.drive, d.noDrive = pickDrive(col, vms, errs, i, collection)
			return true, nil
		}
	}
	return false, nil
}

// pickDrive picks the config drive's device among the collection's other
// members: the best ranked (USBStick, Floppy, another CD or DVD), first in
// the collection's order on a tie.
func pickDrive(col rfCountedCollection, vms []redfish.VirtualMedia, errs []error, cd int, collection string) (string, string) {
	best, rank := "", 99
	for j, m := range col.Members {
		if j == cd || errs[j] != nil {
			continue
		}
		if r := driveRank(vms[j].MediaTypes); r < rank {
			best, rank = m.ID, r
		}
	}
	if best != "" {
		return best, ""
	}
	return "", "no second virtual media device (USBStick, Floppy or another CD/DVD) beside " + short(col.Members[cd].ID) + " in " + short(collection)
}

// driveRank ranks a device for a config drive: 0 USBStick, 1 Floppy, 2 CD
// or DVD, 99 none of them.
func driveRank(types []redfish.VirtualMediaType) int {
	r := 99
	for _, t := range types {
		switch t {
		case redfish.USBStickMediaType:
			r = min(r, 0)
		case redfish.FloppyMediaType:
			r = min(r, 1)
		case redfish.CDMediaType, redfish.DVDMediaType:
			r = min(r, 2)
		}
	}
	return r
}

func takesCD(types []redfish.VirtualMediaType) bool {
	for _, t := range types {
		if t == redfish.CDMediaType || t == redfish.DVDMediaType {
			return true
		}
	}
	return false
}

// Details says what the BMC is: for Redfish its version, vendor, model and
// firmware, the authentication that worked, the system and manager this
// Conn drives, where virtual media lives and how it is driven, the boot
// modes, and what it lacks (Problems); for IPMI only the protocol.
func (c *Conn) Details(ctx context.Context) (*wire.BMCDetails, error) {
	if c.proto != "redfish" {
		return &wire.BMCDetails{Protocol: c.proto, Auth: "ipmi"}, nil
	}
	var out *wire.BMCDetails
	err := c.rfCall(ctx, "details", func(ctx context.Context, s *rfSession) error {
		d, err := c.discover(s)
		if err != nil {
			return err
		}
		if err := c.findVirtualMedia(s, d); err != nil {
			return err
		}
		m, err := c.managerDoc(s, d)
		if err != nil {
			return err
		}
		bd := &wire.BMCDetails{Protocol: "redfish", RedfishVersion: d.redfishVersion, Vendor: d.vendor,
			Auth: s.auth, System: d.system, VirtualMedia: d.vmedia, BootModes: slices.Clone(d.bootModes)}
		if len(d.managers) > 0 {
			bd.Manager = d.managers[0]
		}
		if m != nil {
			if bd.Vendor == "" {
				bd.Vendor = m.Manufacturer
			}
			bd.Model, bd.FirmwareVersion = m.Model, m.FirmwareVersion
		}
		switch {
		case d.vmedia == "":
			if o := offerOf(d); !o.PXE && !o.UEFIHTTP {
				bd.Problems = append(bd.Problems, d.noVMedia) // nothing boots an image
			}
		case d.vmediaAct:
			bd.VirtualMediaMethod = "actions"
		default:
			bd.VirtualMediaMethod = "patch"
		}
		out = bd
		return nil
	})
	return out, err
}
