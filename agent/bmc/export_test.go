package bmc

import (
	"context"

	"github.com/rackfence/rackfence/agent/guard"
)

// SetBootDevice sets the next boot (persistent=false: once) to dev, one of
// pxe, disk, cdrom, bios, none, in UEFI mode, under the guard: SetBootDeviceMode in UEFI mode.
func (c *Conn) SetBootDevice(ctx context.Context, g *guard.Guard, host, dev string, persistent bool) error {
	return c.SetBootDeviceMode(ctx, g, host, dev, persistent, "")
}

// NoQueries makes the Conn read every document plainly, as against a
// service that advertises neither $expand nor $select (after discovery).
func (c *Conn) NoQueries(ctx context.Context) error {
	return c.rfCall(ctx, "test", func(ctx context.Context, s *rfSession) error {
		d, err := c.discover(s)
		if err == nil {
			d.query = &rfQuery{}
		}
		return err
	})
}
