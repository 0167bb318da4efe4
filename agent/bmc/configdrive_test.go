package bmc

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/errclass"
)

// The config drive goes in the second device (USB1 beside CD1), by PATCH
// here; an insert that does not take fails without the drive's URL in the
// error (it becomes a host event; the URL's token gives the user data).
func TestConfigDriveSlotKeepsURLOutOfErrors(t *testing.T) {
	f := vmediaPatch(t)
	usb := "/redfish/v1/Systems/1/VirtualMedia/USB1"
	cd := "/redfish/v1/Systems/1/VirtualMedia/CD1"
	c, err := dialFake(t, f, "", "password")
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	g, _ := leasedGuard(time.Minute, nil)
	const secret = "http://10.0.0.5:8090/drives/0123456789abcdef/config-2.iso"
	f.mu.Lock()
	f.actions["PATCH "+usb] = func(*fakeRF, map[string]any) int { return http.StatusNoContent } // accepted, not applied
	f.mu.Unlock()
	err = c.InsertConfigDrive(ctx, g, "h", secret)
	if !errors.Is(err, errclass.ErrFailed) || strings.Contains(err.Error(), "0123456789abcdef") || !strings.Contains(err.Error(), "config drive URL, not shown") {
		t.Fatalf("insert that did not take: %v; want errclass.ErrFailed without the URL", err)
	}
	f.mu.Lock()
	delete(f.actions, "PATCH "+usb)
	f.mu.Unlock()
	if err := c.InsertConfigDrive(ctx, g, "h", secret); err != nil {
		t.Fatal(err)
	}
	if d := f.doc(usb); d["Image"] != secret || d["Inserted"] != true {
		t.Fatalf("USB1 after insert: %v", d)
	}
	if d := f.doc(cd); d["Inserted"] == true {
		t.Fatalf("the CD changed: %v", d)
	}
	if err := c.EjectConfigDrive(ctx, g, "h"); err != nil {
		t.Fatal(err)
	}
	if d := f.doc(usb); d["Inserted"] != false {
		t.Fatalf("USB1 after eject: %v", d)
	}
}

func TestRedactURLKeepsTheClass(t *testing.T) {
	const u = "http://10.0.0.5:8090/drives/abc/config-2.iso"
	err := redactURL(fmt.Errorf("%w: the BMC refused the operation with 400 (Unable to mount %s)", errclass.ErrFailed, u), u)
	if !errors.Is(err, errclass.ErrFailed) || strings.Contains(err.Error(), "drives/abc") || !strings.Contains(err.Error(), "Unable to mount (config drive URL, not shown)") {
		t.Fatalf("redacted: %v", err)
	}
	if redactURL(nil, u) != nil {
		t.Fatal("nil error redacted into something")
	}
}
