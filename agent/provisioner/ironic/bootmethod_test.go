package ironic_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/shared/wire"
)

// bootMethod uefihttp: Ironic 21.4 has no UEFI HTTP boot interface for
// the redfish hardware type; the provision is refused, naming what to use
// instead, and the node is left available.
func TestBootMethodUEFIHTTPRefused(t *testing.T) {
	url := needIronic(t)
	p := newProv(t, url, fakeHW)
	ctx := ctxT(t)
	h := fakeHost("uefihttp")
	r := must(t, "register")(p.Register(ctx, h))
	h.ProvisioningID = r.ProvisioningID
	must(t, "provide")(p.Provide(ctx, h))
	wantState(t, url, h.ProvisioningID, "available")
	h.BootMethod = wire.BootMethodUEFIHTTP
	h.Image = &wire.Image{URL: "http://127.0.0.1:9/images/live.iso"}
	_, err := p.Provision(ctx, h)
	if !errors.Is(err, errclass.ErrUnsupported) || !strings.Contains(err.Error(), "bootMethod vmedia or pxe") {
		t.Fatalf("provision with bootMethod uefihttp: %v; want ErrUnsupported naming what to use", err)
	}
	wantState(t, url, h.ProvisioningID, "available")
}
