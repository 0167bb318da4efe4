package bmc

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/shared/wire"
)

// Inventory reads the hardware of the Conn's system: vendor, model, serial,
// UUID, BIOS version, CPUs (and non-CPU processors as accelerators),
// memory, NICs with their MACs, disks and firmware versions (Redfish only;
// over IPMI it answers errclass.ErrUnsupported). It reads what the service offers,
// following the system's links, in rounds of parallel GETs on the Conn's
// session (session or Basic; see fastInventory).
func (c *Conn) Inventory(ctx context.Context) (*wire.HardwareDetails, error) {
	if c.proto != "redfish" {
		return nil, fmt.Errorf("%w: inventory needs a Redfish BMC; %s is %s", errclass.ErrUnsupported, c.addr, c.proto)
	}
	var hd *wire.HardwareDetails
	err := c.rfCall(ctx, "inventory", func(ctx context.Context, s *rfSession) error {
		d, err := c.discover(s)
		if err != nil {
			return err
		}
		sys, err := c.inventorySystem(s, d)
		if err != nil {
			return err
		}
		hd, err = fastInventory(s, d, sys, c.invMgr.take())
		return err
	})
	return hd, err
}

// inventoryReuse bounds the age of a system or manager document an
// Inventory takes from the registration before it instead of reading it
// again: registration to inspection takes milliseconds to seconds; a
// re-inspection, an intent given later, always reads afresh.
const inventoryReuse = 30 * time.Second

// keptDoc is a document read earlier on a Conn, kept for one Inventory.
type keptDoc[T any] struct {
	doc *T
	at  time.Time
}

// keep remembers doc, read now.
func (k *keptDoc[T]) keep(doc *T) { k.doc, k.at = doc, time.Now() }

// take returns the kept document if it was read within inventoryReuse
// (else nil), and forgets it either way.
func (k *keptDoc[T]) take() *T {
	doc, at := k.doc, k.at
	*k = keptDoc[T]{}
	if time.Since(at) >= inventoryReuse {
		return nil
	}
	return doc
}

// inventorySystem reads the system for inventory: expanded when the service
// offers it (a refusal turns expansion off for this Conn and reads it
// plainly), else the document discovery read on this Conn when this is its
// first inventory (registration, then inspection), else a fresh GET.
func (c *Conn) inventorySystem(s *rfSession, d *rfDiscovery) (*rfSystemDoc, error) {
	kept := c.invSys.take()
	if x := d.query.expand(expandLevels); x != "" && !d.query.oneLevel() {
		var sys rfSystemDoc
		var hs rfHealthSystem
		err := rfGet(s.api, d.system+x, &sys, &hs)
		if err == nil {
			c.freshSys = nil
			c.healthSys.keep(&hs)
			return &sys, nil
		}
		if !expandRefused(err) {
			return nil, err
		}
		c.opts.Logger.Debug("redfish $expand refused, reading inventory link by link", "bmc", c.addr, "expand", x, "err", err.Error())
		d.query.expandOff()
	}
	if kept != nil {
		c.freshSys = nil
		return kept, nil
	}
	return c.systemDoc(s, d)
}

// fastInventory walks the system in 4 rounds of parallel GETs (the system;
// its collections and the manager; their members; the drives), at most
// rfConcurrency at a time (gofish's client bound). A walk one resource
// after the other took about 6.5 s per host at 200 ms BMC latency; this
// takes under 1 s (BenchmarkOpsLatency200ms). A link to nothing (404) is
// read as empty: services list links they do not serve.
//
// What is read, as the Redfish schema allows it:
//   - disks: Storage → Drives, followed by their links wherever they live
//     (Dell and HPE towers link Chassis/{id}/Drives/{d}) and named by Id,
//     else Name, else the link's last segment; else (no drive there)
//     SimpleStorage → Devices; Absent skipped;
//   - memory: MemorySummary.TotalSystemMemoryGiB × 1024 (what Ironic
//     reports; a Memory collection may list only some devices, such as
//     CXL regions), else the Memory collection (CapacityMiB, else
//     VolatileSizeMiB, of the modules not Absent);
//   - processors: ProcessorType CPU (or none given) are CPUs, with or
//     without core counts, any other type an accelerator; Absent skipped;
//   - NICs: the system's EthernetInterfaces (never the manager's) with a
//     MAC; a Physical interface counts whatever its VLAN settings; skipped:
//     Virtual interfaces, VLAN children (Links.RelatedInterfaces names
//     their parent; without EthernetInterfaceType, VLAN.VLANEnable), and
//     the host interface to the BMC (Links.HostInterface);
//   - firmware: BIOS (BiosVersion), then BMC (the manager's FirmwareVersion).
//
// What the system document carries inline ($expand) is not read again; mgr,
// when not nil, is the manager document read earlier in this registration.
func fastInventory(s *rfSession, d *rfDiscovery, sys *rfSystemDoc, mgrDoc *rfManagerDoc) (*wire.HardwareDetails, error) {
	f := &rfFetcher{s: s, q: d.query, expandCollections: d.query.oneLevel()}
	hd := &wire.HardwareDetails{Manufacturer: sys.Manufacturer, Model: sys.Model, SerialNumber: sys.SerialNumber,
		BIOSVersion: sys.BiosVersion, SystemUUID: sys.UUID}
	if sys.BiosVersion != "" {
		hd.Firmware = append(hd.Firmware, wire.Firmware{Name: "BIOS", Version: sys.BiosVersion})
	}

	var (
		procs, dimms, stors, simple, nics []rfMember
		mgr                               rfManagerDoc
		haveMemoryCollection              bool
	)
	round := f.group()
	round.collection(sys.Processors, &procs, nil)
	round.collection(sys.Memory, &dimms, &haveMemoryCollection)
	round.collection(sys.Storage, &stors, nil)
	round.collection(sys.SimpleStorage, &simple, nil)
	round.collection(sys.EthernetInterfaces, &nics, nil)
	switch {
	case mgrDoc != nil:
		mgr = *mgrDoc
	case len(d.managers) > 0:
		round.fetch(d.managers[0], &mgr)
	}
	if err := round.wait(); err != nil {
		return nil, err
	}

	type status struct{ State string }
	type proc struct {
		ID                       string `json:"Id"`
		ProcessorType, Model     string
		TotalCores, TotalThreads int
		Status                   status
	}
	type dimm struct {
		CapacityMiB, VolatileSizeMiB int
		Status                       status
	}
	type stor struct{ Drives []rfMember }
	type simpleStor struct {
		Devices []struct {
			Name, Model   string
			CapacityBytes int64
			MediaType     string
			Status        status
		}
	}
	type nic struct {
		ID                    string `json:"Id"`
		MACAddress            string
		SpeedMbps             int
		VLAN                  *struct{ VLANEnable bool }
		EthernetInterfaceType string
		Links                 struct {
			RelatedInterfaces []rfLink
			HostInterface     *rfLink
		}
	}
	ps, ds, ss := make([]proc, len(procs)), make([]dimm, len(dimms)), make([]stor, len(stors))
	sss, ns := make([]simpleStor, len(simple)), make([]nic, len(nics))
	round = f.group()
	for i, p := range procs {
		round.member(p, &ps[i])
	}
	for i, p := range dimms {
		round.member(p, &ds[i])
	}
	for i, p := range stors {
		round.member(p, &ss[i])
	}
	for i, p := range simple {
		round.member(p, &sss[i])
	}
	for i, p := range nics {
		round.member(p, &ns[i])
	}
	if err := round.wait(); err != nil {
		return nil, err
	}
	for i, p := range ps {
		if p.Status.State == "Absent" {
			continue
		}
		if p.ID == "" {
			p.ID = lastSegment(procs[i].ID)
		}
		if p.ProcessorType == "" || p.ProcessorType == "CPU" {
			hd.CPUs = append(hd.CPUs, wire.CPU{Model: strings.TrimSpace(p.Model), Cores: p.TotalCores, Threads: p.TotalThreads})
		} else {
			hd.Accelerators = append(hd.Accelerators, wire.Accelerator{Name: p.ID, Type: p.ProcessorType, Model: strings.TrimSpace(p.Model)})
		}
	}
	for _, m := range ds {
		if m.Status.State == "Absent" {
			continue
		}
		if m.CapacityMiB > 0 {
			hd.MemoryMiB += m.CapacityMiB
		} else {
			hd.MemoryMiB += m.VolatileSizeMiB
		}
	}
	if total := int(math.Round(sys.MemorySummary.TotalSystemMemoryGiB * 1024)); total > 0 || !haveMemoryCollection {
		// The summary is the system's memory; the collection may list only
		// some devices (CXL regions) or none.
		hd.MemoryMiB = total
	}
	for _, n := range ns {
		if n.MACAddress == "" || !hostNIC(n.EthernetInterfaceType, n.VLAN != nil && n.VLAN.VLANEnable,
			len(n.Links.RelatedInterfaces) > 0, n.Links.HostInterface != nil) {
			continue
		}
		hd.NICs = append(hd.NICs, wire.NIC{Name: n.ID, MAC: strings.ToLower(n.MACAddress), SpeedMbps: n.SpeedMbps})
	}
	if mgr.FirmwareVersion != "" {
		hd.Firmware = append(hd.Firmware, wire.Firmware{Name: "BMC", Version: mgr.FirmwareVersion})
	}

	var drives []rfMember
	for _, s := range ss {
		drives = append(drives, s.Drives...)
	}
	type drive struct {
		ID            string `json:"Id"`
		Name, Model   string
		CapacityBytes int64
		MediaType     string
		Status        status
	}
	dr := make([]drive, len(drives))
	round = f.group()
	for i, p := range drives {
		round.member(p, &dr[i])
	}
	if err := round.wait(); err != nil {
		return nil, err
	}
	for i, d := range dr {
		if d.Status.State == "Absent" {
			continue
		}
		name := d.ID
		if name == "" {
			name = cmp.Or(d.Name, lastSegment(drives[i].ID))
		}
		if name == "" {
			continue // neither a document nor a link: nothing was read
		}
		hd.Disks = append(hd.Disks, wire.Disk{Name: name, Model: d.Model, SizeBytes: d.CapacityBytes, Type: d.MediaType})
	}
	if len(hd.Disks) > 0 {
		// Services serving both (sushy-tools, several BMCs) list the same
		// disks twice; Storage is the richer view.
		return hd, nil
	}
	for _, s := range sss {
		for _, d := range s.Devices {
			if d.Status.State == "Absent" {
				continue
			}
			hd.Disks = append(hd.Disks, wire.Disk{Name: d.Name, Model: d.Model, SizeBytes: d.CapacityBytes, Type: d.MediaType})
		}
	}
	return hd, nil
}

// hostNIC says whether a system EthernetInterface is a NIC of the host:
// a Physical interface is, whatever its VLAN settings; a Virtual one, a
// VLAN child (it names its parent in Links.RelatedInterfaces; a service
// giving no type marks it only by VLAN.VLANEnable) and the host interface
// to the BMC (Links.HostInterface) are not.
func hostNIC(typ string, vlanEnabled, hasParent, toBMC bool) bool {
	switch {
	case toBMC, typ == "Virtual", hasParent:
		return false
	case typ == "Physical":
		return true
	}
	return !vlanEnabled
}

// lastSegment is the last path segment of a Redfish link ("" for none).
func lastSegment(link string) string {
	link = strings.TrimRight(link, "/")
	return link[strings.LastIndex(link, "/")+1:]
}

// rfFetcher GETs Redfish resources through the session's gofish client
// (its auth, the Conn's transport: the call's deadline, User-Agent and
// error classification), at most rfConcurrency at a time.
// With expandCollections (a service expanding one level), a collection
// not inline is read with $expand=. (its members inline; a refusal reads
// it plainly and turns expansion off for the Conn).
type rfFetcher struct {
	s                 *rfSession
	q                 *rfQuery
	expandCollections bool
}

func (f *rfFetcher) get(path string, into any) error { return rfGet(f.s.api, path, into) }

type rfGroup struct {
	f    *rfFetcher
	wg   sync.WaitGroup
	mu   sync.Mutex
	errs []error
}

func (f *rfFetcher) group() *rfGroup { return &rfGroup{f: f} }

func (g *rfGroup) do(fn func() error) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		if err := fn(); err != nil && !isNotFound(err) {
			g.mu.Lock()
			g.errs = append(g.errs, err)
			g.mu.Unlock()
		}
	}()
}

func (g *rfGroup) fetch(path string, into any) {
	if path == "" {
		return
	}
	g.do(func() error { return g.f.get(path, into) })
}

// member decodes m's inline document into into, else GETs it.
func (g *rfGroup) member(m rfMember, into any) {
	if m.raw == nil {
		g.fetch(m.ID, into)
		return
	}
	if err := json.Unmarshal(m.raw, into); err != nil {
		g.mu.Lock()
		g.errs = append(g.errs, fmt.Errorf("%w: %s: %v", errclass.ErrFailed, m.ID, err))
		g.mu.Unlock()
	}
}

// collection reads the members of the collection n links to (inline when
// the answer carried them); present, when not nil, says whether the
// service served the collection.
func (g *rfGroup) collection(n rfNavCollection, into *[]rfMember, present *bool) {
	if n.Members != nil {
		*into = *n.Members
		if present != nil {
			*present = true
		}
		return
	}
	if n.ID == "" {
		return
	}
	g.do(func() error {
		var col rfMemberCollection
		err := errExpandOff
		if g.f.expandCollections && g.f.q.expand(1) != "" {
			if err = g.f.get(n.ID+"?$expand=.", &col); expandRefused(err) {
				g.f.q.expandOff()
				err = errExpandOff
			}
		}
		if err == errExpandOff {
			err = g.f.get(n.ID, &col)
		}
		if err != nil {
			return err
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		if present != nil {
			*present = true
		}
		*into = append(*into, col.Members...)
		return nil
	})
}

// errExpandOff: read the collection plainly.
var errExpandOff = errors.New("no $expand")

func (g *rfGroup) wait() error {
	g.wg.Wait()
	return errors.Join(g.errs...)
}
