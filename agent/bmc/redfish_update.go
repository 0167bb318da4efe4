package bmc

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
)

// Firmware update (DMTF UpdateService, SoftwareInventory): the inventory
// is UpdateService.FirmwareInventory; a flash starts with
// #UpdateService.SimpleUpdate {ImageURI, Targets} (the BMC fetches the
// image) or, where the BMC offers only that (OpenBMC), a multipart POST
// to MultipartHttpPushUri (the agent fetches the image and pushes it). It
// runs as a BMC task for 5–30 minutes; a power change meanwhile can brick
// the board, so nothing here ever touches power, and an update is done
// only when the inventory shows the new version.

// MaxPushImageBytes bounds an image the agent fetches for a multipart
// push (held in memory for the POST).
const MaxPushImageBytes = 256 << 20

// FirmwareItem is one member of FirmwareInventory.
type FirmwareItem struct {
	URI, ID, Name, Version string
	Updateable             bool
	// RelatedItems are what it is the firmware of (a Manager, a Bios, a
	// system), as URIs.
	RelatedItems []string
	// State is its Status.State (Updating during a flash on some BMCs).
	State string
}

// UpdateRequest says what to flash.
type UpdateRequest struct {
	// Component is the inventory item: its Id, URI or Name.
	Component string
	// ImageURL is the image: fetched by the BMC (SimpleUpdate) or by the
	// agent and pushed (multipart). http or https.
	ImageURL string
	// Version is the version the item must show afterwards; "" accepts
	// any version other than the one before.
	Version string
}

// Update is a flash started by StartUpdate.
type Update struct {
	Component   string // the item's URI
	Name        string
	FromVersion string
	Version     string // expected ("" any other than FromVersion)
	// Method is "SimpleUpdate" or "MultipartHttpPush".
	Method string
	// Task is the Task resource, Monitor its task monitor (either may be
	// "" when the BMC gave none).
	Task, Monitor string
}

type rfUpdateServiceDoc struct {
	ID                   string `json:"@odata.id"`
	ServiceEnabled       *bool
	FirmwareInventory    rfLink
	MultipartHTTPPushURI string `json:"MultipartHttpPushUri"`
	Actions              struct {
		SimpleUpdate *struct {
			Target    string   `json:"target"`
			Protocols []string `json:"TransferProtocol@Redfish.AllowableValues"`
		} `json:"#UpdateService.SimpleUpdate"`
	}
}

type rfFirmwareDoc struct {
	ODataID     string `json:"@odata.id"`
	ID          string `json:"Id"`
	Name        string
	Version     string
	Updateable  bool
	RelatedItem []rfLink
	Status      struct{ State string }
}

func (d *rfFirmwareDoc) item(uri string) FirmwareItem {
	it := FirmwareItem{URI: uri, ID: idOf(d.ID, uri), Name: d.Name, Version: d.Version, Updateable: d.Updateable, State: d.Status.State}
	for _, r := range d.RelatedItem {
		it.RelatedItems = append(it.RelatedItems, r.ID)
	}
	return it
}

// updateService reads the UpdateService (errclass.ErrUnsupported without one).
// c.mu held.
func (c *Conn) updateService(s *rfSession) (*rfUpdateServiceDoc, error) {
	root, err := rootLinks(s)
	if err != nil {
		return nil, err
	}
	if root.UpdateService.ID == "" {
		return nil, fmt.Errorf("%w: %s: the BMC offers no UpdateService (its service root links none): firmware cannot be inventoried or updated through Redfish; use the vendor's tool", errclass.ErrUnsupported, c.addr)
	}
	var u rfUpdateServiceDoc
	if err := rfGet(s.api, root.UpdateService.ID, &u); err != nil {
		if isNotFound(err) {
			return nil, fmt.Errorf("%w: %s: the service root links UpdateService %s but the BMC answers 404 for it: firmware cannot be updated through Redfish", errclass.ErrUnsupported, c.addr, short(root.UpdateService.ID))
		}
		return nil, err
	}
	if u.ID == "" {
		u.ID = root.UpdateService.ID
	}
	if u.ServiceEnabled != nil && !*u.ServiceEnabled {
		return nil, fmt.Errorf("%w: %s: %s is disabled (ServiceEnabled false): enable it on the BMC", errclass.ErrUnsupported, c.addr, short(u.ID))
	}
	return &u, nil
}

// firmwareItems reads the inventory, members in parallel. c.mu held.
func (c *Conn) firmwareItems(s *rfSession, u *rfUpdateServiceDoc) ([]FirmwareItem, error) {
	if u.FirmwareInventory.ID == "" {
		return nil, fmt.Errorf("%w: %s: %s links no FirmwareInventory", errclass.ErrUnsupported, c.addr, short(u.ID))
	}
	var col rfCollection
	if err := rfGet(s.api, u.FirmwareInventory.ID, &col); err != nil {
		return nil, err
	}
	docs := make([]rfFirmwareDoc, len(col.Members))
	g := (&rfFetcher{s: s}).group()
	for i, m := range col.Members {
		g.fetch(m.ID, &docs[i])
	}
	if err := g.wait(); err != nil {
		return nil, err
	}
	out := make([]FirmwareItem, 0, len(docs))
	for i, d := range docs {
		if d.ODataID == "" && d.ID == "" && d.Version == "" {
			continue // 404: listed but not served
		}
		out = append(out, d.item(col.Members[i].ID))
	}
	return out, nil
}

// FirmwareInventory lists the BMC's firmware inventory.
func (c *Conn) FirmwareInventory(ctx context.Context) ([]FirmwareItem, error) {
	if c.proto != "redfish" {
		return nil, fmt.Errorf("%w: firmware inventory needs a Redfish BMC; %s is %s", errclass.ErrUnsupported, c.addr, c.proto)
	}
	var out []FirmwareItem
	err := c.rfCall(ctx, "firmware inventory", func(ctx context.Context, s *rfSession) error {
		u, err := c.updateService(s)
		if err != nil {
			return err
		}
		out, err = c.firmwareItems(s, u)
		return err
	})
	return out, err
}

// findItem picks the inventory item ref names (Id, URI or Name).
func findItem(items []FirmwareItem, ref string) (FirmwareItem, bool) {
	for _, it := range items {
		if sameRef(ref, it.ID, it.URI) {
			return it, true
		}
	}
	for _, it := range items {
		if it.Name == ref {
			return it, true
		}
	}
	return FirmwareItem{}, false
}

func itemNames(items []FirmwareItem) string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, fmt.Sprintf("%s (%s, %s)", it.ID, it.Name, it.Version))
	}
	return strings.Join(out, ", ")
}

// StartUpdate: see DayTwo. What to send is read and checked before the
// guard (and, for a push, the image fetched); the POST alone runs inside
// it.
func (c *Conn) StartUpdate(ctx context.Context, g *guard.Guard, host string, req UpdateRequest) (*Update, error) {
	if c.proto != "redfish" {
		return nil, fmt.Errorf("%w: firmware update needs a Redfish BMC; %s is %s", errclass.ErrUnsupported, c.addr, c.proto)
	}
	img, err := url.Parse(req.ImageURL)
	switch {
	case req.Component == "":
		return nil, fmt.Errorf("%w: firmware update: component is empty: give an inventory item's Id, URI or Name", errclass.ErrFailed)
	case err != nil || (img.Scheme != "http" && img.Scheme != "https") || img.Host == "":
		return nil, fmt.Errorf("%w: firmware update: image URL %q is not an http(s) URL", errclass.ErrFailed, req.ImageURL)
	}
	var (
		svc   *rfUpdateServiceDoc
		items []FirmwareItem
	)
	err = c.rfCall(ctx, "firmware inventory", func(ctx context.Context, s *rfSession) error {
		var err error
		if svc, err = c.updateService(s); err != nil {
			return err
		}
		items, err = c.firmwareItems(s, svc)
		return err
	})
	if err != nil {
		return nil, err
	}
	it, ok := findItem(items, req.Component)
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: %s: no firmware inventory item %q; the BMC lists %s", errclass.ErrFailed, c.addr, req.Component, itemNames(items))
	case !it.Updateable:
		return nil, fmt.Errorf("%w: %s: firmware item %s (%s) is not Updateable", errclass.ErrFailed, c.addr, it.ID, it.Name)
	case it.State == "Updating":
		return nil, fmt.Errorf("%w: %s: firmware item %s (%s) reads Status.State Updating", ErrUpdateInProgress, c.addr, it.ID, it.Name)
	}
	u := &Update{Component: it.URI, Name: it.Name, FromVersion: it.Version, Version: req.Version}
	updateable := 0
	for _, x := range items {
		if x.Updateable {
			updateable++
		}
	}
	var (
		target  string
		body    any
		push    []byte
		pushCT  string
		pushErr error
	)
	switch {
	case svc.Actions.SimpleUpdate != nil && svc.Actions.SimpleUpdate.Target != "":
		u.Method, target = "SimpleUpdate", svc.Actions.SimpleUpdate.Target
		b := map[string]any{"ImageURI": req.ImageURL}
		if updateable > 1 {
			b["Targets"] = []string{it.URI}
		}
		if p := strings.ToUpper(img.Scheme); slices.Contains(svc.Actions.SimpleUpdate.Protocols, p) {
			b["TransferProtocol"] = p
		}
		body = b
	case svc.MultipartHTTPPushURI != "":
		u.Method, target = "MultipartHttpPush", svc.MultipartHTTPPushURI
		push, pushCT, pushErr = pushBody(ctx, req.ImageURL, it.URI)
		if pushErr != nil {
			return nil, pushErr
		}
	default:
		return nil, fmt.Errorf("%w: %s: %s offers neither #UpdateService.SimpleUpdate nor MultipartHttpPushUri", errclass.ErrUnsupported, c.addr, short(svc.ID))
	}
	var (
		hdr    http.Header
		answer []byte
	)
	err = g.Do(ctx, host, "firmware update", c.opts.MutationTimeout, func(ctx context.Context) error {
		return c.rfCall(ctx, "firmware update", func(ctx context.Context, s *rfSession) error {
			var (
				resp *http.Response
				err  error
			)
			if push != nil {
				resp, err = s.api.RunRawRequestWithHeaders(http.MethodPost, target, bytes.NewReader(push), pushCT, nil)
			} else {
				resp, err = s.api.Post(target, body)
			}
			if err != nil {
				if status, msg, ok := bmcRefusal(err); ok && status == http.StatusConflict {
					return fmt.Errorf("%w: %s: the BMC refused the update of %s: %s", ErrUpdateInProgress, c.addr, it.Name, msg)
				}
				return c.refused(err, u.Method+" of "+it.Name)
			}
			hdr, answer = readAnswer(resp)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	u.Monitor = hdr.Get("Location")
	var td rfTaskDoc
	if jsonRaw(answer, &td) && td.TaskState != "" {
		u.Task = td.ODataID
		if td.TaskMonitor != "" && u.Monitor == "" {
			u.Monitor = td.TaskMonitor
		}
	}
	if u.Task == "" && u.Monitor != "" {
		// The Task resource is stable where a monitor may go once the
		// task ended: learn it now (read-only; a failure leaves the
		// monitor to follow).
		if st, err := c.Task(ctx, u.Monitor); err == nil && st.URI != "" {
			u.Task = st.URI
		}
	}
	return u, nil
}
