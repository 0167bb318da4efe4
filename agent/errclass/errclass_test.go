package errclass_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/rackfence/rackfence/agent/bmc"
	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/provisioner"
)

// The names agent/bmc and agent/provisioner give the classes are the same
// values: an error wrapped by one layer is recognised by every other, and
// the classes stay distinct.
func TestClassesMatchAcrossLayers(t *testing.T) {
	classes := []struct {
		name               string
		class, bmcN, provN error
	}{
		{"transient", errclass.ErrTransient, bmc.ErrTransient, provisioner.ErrTransient},
		{"auth", errclass.ErrAuth, bmc.ErrAuth, provisioner.ErrAuth},
		{"failed", errclass.ErrFailed, bmc.ErrFailed, provisioner.ErrFailed},
		{"unsupported", errclass.ErrUnsupported, bmc.ErrUnsupported, provisioner.ErrUnsupported},
		{"not found", errclass.ErrNotFound, nil, provisioner.ErrNotFound},
	}
	for i, c := range classes {
		fromBMC := fmt.Errorf("%w: power on h0: 503", c.bmcN)
		if c.bmcN == nil {
			fromBMC = fmt.Errorf("%w: node gone", c.provN)
		}
		fromProv := fmt.Errorf("ironic: %w", fromBMC)
		for _, err := range []error{fromBMC, fromProv} {
			if !errors.Is(err, c.class) || !errors.Is(err, c.provN) {
				t.Errorf("%s: %v is not its class", c.name, err)
			}
			for j, other := range classes {
				if j != i && errors.Is(err, other.class) {
					t.Errorf("%s: %v also matches %s", c.name, err, other.name)
				}
			}
		}
	}
	if !errors.Is(bmc.ErrPoolClosed, errclass.ErrTransient) {
		t.Error("bmc.ErrPoolClosed is not transient")
	}
}
