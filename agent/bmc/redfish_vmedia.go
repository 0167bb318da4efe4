package bmc

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/stmcginnis/gofish/redfish"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
)

// Redfish virtual media: the device discovery found (the system's
// VirtualMedia first, then its managers'; MediaTypes with CD or DVD),
// driven by its InsertMedia/EjectMedia actions when it has them, else by
// PATCH of Image and Inserted (If-Match with its ETag); every change is
// read back and fails with errclass.ErrFailed when it did not take.
//
// The mutating gofish calls sit lexically inside the Guard.Do closures
// (agent/guard's guardcheck_test.go checks it), hence the long closures.

// rfMediaDoc is what the layer reads of a VirtualMedia beside gofish's
// view: which of the optional properties the resource lists.
type rfMediaDoc map[string]json.RawMessage

func (m rfMediaDoc) has(prop string) bool { _, ok := m[prop]; return ok }

// transferProtocol is the Redfish TransferProtocolType of an image URL.
func transferProtocol(u string) redfish.TransferProtocolType {
	pu, err := url.Parse(u)
	if err != nil {
		return ""
	}
	switch strings.ToLower(pu.Scheme) {
	case "https":
		return redfish.HTTPSTransferProtocolType
	case "http":
		return redfish.HTTPTransferProtocolType
	case "nfs":
		return redfish.NFSTransferProtocolType
	case "cifs", "smb":
		return redfish.CIFSTransferProtocolType
	case "ftp":
		return redfish.FTPTransferProtocolType
	case "sftp":
		return redfish.SFTPTransferProtocolType
	case "tftp":
		return redfish.TFTPTransferProtocolType
	}
	return ""
}

// mediaSlot is the device a media call drives: the CD the image boots
// from, or the second device the config drive goes in.
type mediaSlot int

const (
	slotCD mediaSlot = iota
	slotDrive
)

// ops are the guard's operation names of each slot's insert and eject.
func (m mediaSlot) ops() (insert, eject string) {
	if m == slotDrive {
		return "config drive insert", "config drive eject"
	}
	return "media insert", "media eject"
}

// show is how an error names a URL in the slot's device: a config
// drive's URL is a secret (its token gives the host's user data), so it is
// never put in an error (which becomes a host event).
func (m mediaSlot) show(u string) string {
	if m == slotDrive && u != "" {
		return "(config drive URL, not shown)"
	}
	return fmt.Sprintf("%q", u)
}

// redactedError is an error whose message had a secret removed; errors.Is
// still sees what it wraps.
type redactedError struct {
	err error
	msg string
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.err }

// redactURL removes url from err's message (a BMC may echo the Image it
// refused in its error body, which classify quotes).
func redactURL(err error, url string) error {
	if err == nil || url == "" || !strings.Contains(err.Error(), url) {
		return err
	}
	return redactedError{err: err, msg: strings.ReplaceAll(err.Error(), url, "(config drive URL, not shown)")}
}

// slotDevice returns the slot's device path: for an insert errclass.ErrUnsupported
// naming what was searched when there is none; for an eject "" (nothing
// can be inserted there). c.mu held.
func (c *Conn) slotDevice(s *rfSession, slot mediaSlot, insert bool) (string, error) {
	d, err := c.discover(s)
	if err != nil {
		return "", err
	}
	if err := c.findVirtualMedia(s, d); err != nil {
		return "", err
	}
	dev, none := d.vmedia, d.noVMedia
	if slot == slotDrive && d.vmedia != "" {
		dev, none = d.drive, d.noDrive
	}
	if dev == "" && insert {
		what := ""
		if slot == slotDrive {
			what = "config drive: "
		}
		return "", fmt.Errorf("%w: %s (%s): %s%s", errclass.ErrUnsupported, c.addr, short(d.system), what, none)
	}
	return dev, nil
}

// readMedia GETs the device (gofish's view, with its ETag, and the raw
// property list).
func readMedia(s *rfSession, path string) (*redfish.VirtualMedia, rfMediaDoc, error) {
	var vm redfish.VirtualMedia
	raw := rfMediaDoc{}
	if err := rfGet(s.api, path, &vm, &raw); err != nil {
		return nil, nil, err
	}
	return &vm, raw, nil
}

// rfInsertMedia inserts url in the slot's device (ejecting a different
// medium first).
func (c *Conn) rfInsertMedia(ctx context.Context, g *guard.Guard, host, image string, slot mediaSlot) error {
	op, _ := slot.ops()
	return g.Do(ctx, host, op, c.opts.MutationTimeout, func(ctx context.Context) error {
		return c.rfCall(ctx, op, func(ctx context.Context, s *rfSession) error {
			dev, err := c.slotDevice(s, slot, true)
			if err != nil {
				return err
			}
			vm, raw, err := readMedia(s, dev)
			if err != nil {
				return err
			}
			if vm.Inserted && vm.Image == image {
				return nil // already there
			}
			if vm.Inserted {
				if vm.SupportsMediaEject {
					err = vm.EjectMedia()
				} else {
					err = vm.Patch(dev, map[string]any{"Image": nil, "Inserted": false})
				}
				if err != nil {
					return err
				}
				if vm, raw, err = readMedia(s, dev); err != nil {
					return err
				}
				if vm.Inserted {
					return fmt.Errorf("%w: %s: the BMC accepted the eject of %s but %s still reads Inserted", errclass.ErrFailed, c.addr, slot.show(vm.Image), short(dev))
				}
			}
			proto := transferProtocol(image)
			if vm.SupportsMediaInsert {
				cfg := redfish.VirtualMediaConfig{Image: image, Inserted: true, WriteProtected: true}
				if raw.has("TransferProtocolType") {
					cfg.TransferProtocolType = proto
				}
				if raw.has("TransferMethod") {
					cfg.TransferMethod = redfish.StreamTransferMethod
				}
				err = vm.InsertMediaConfig(cfg)
			} else {
				body := map[string]any{"Image": image, "Inserted": true}
				if raw.has("WriteProtected") {
					body["WriteProtected"] = true
				}
				if raw.has("TransferProtocolType") && proto != "" {
					body["TransferProtocolType"] = proto
				}
				if raw.has("TransferMethod") {
					body["TransferMethod"] = redfish.StreamTransferMethod
				}
				err = vm.Patch(dev, body)
			}
			if err != nil {
				return err
			}
			back, _, err := readMedia(s, dev)
			if err != nil {
				return err
			}
			if !back.Inserted || back.Image != image {
				return fmt.Errorf("%w: %s: the BMC accepted the insert of %s but %s reads back Image %s, Inserted %v",
					errclass.ErrFailed, c.addr, slot.show(image), short(dev), slot.show(back.Image), back.Inserted)
			}
			return nil
		})
	})
}

// rfEjectMedia ejects the slot's device's medium; nothing inserted, or no
// device at all (nothing can be inserted), is nothing to do.
func (c *Conn) rfEjectMedia(ctx context.Context, g *guard.Guard, host string, slot mediaSlot) error {
	_, op := slot.ops()
	return g.Do(ctx, host, op, c.opts.MutationTimeout, func(ctx context.Context) error {
		return c.rfCall(ctx, op, func(ctx context.Context, s *rfSession) error {
			dev, err := c.slotDevice(s, slot, false)
			if err != nil {
				return err
			}
			if dev == "" {
				return nil
			}
			vm, _, err := readMedia(s, dev)
			if err != nil {
				return err
			}
			if !vm.Inserted {
				return nil
			}
			if vm.SupportsMediaEject {
				err = vm.EjectMedia()
			} else {
				err = vm.Patch(dev, map[string]any{"Image": nil, "Inserted": false})
			}
			if err != nil {
				return err
			}
			back, _, err := readMedia(s, dev)
			if err != nil {
				return err
			}
			if back.Inserted {
				return fmt.Errorf("%w: %s: the BMC accepted the eject but %s reads back Inserted with Image %s", errclass.ErrFailed, c.addr, short(dev), slot.show(back.Image))
			}
			return nil
		})
	})
}
