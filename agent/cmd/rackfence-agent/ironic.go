package main

import (
	"errors"
	"log/slog"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/provisioner"
)

// newIronic builds the Ironic provisioner (--provisioner ironic).
func newIronic(o options, guard *bmc.Guard, bmcOpts bmc.Options, log *slog.Logger) (provisioner.Provisioner, func(), error) {
	return nil, nil, errors.New("--provisioner ironic is not wired into this build yet")
}
