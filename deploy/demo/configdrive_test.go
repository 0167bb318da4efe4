package demo

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/testkit/testenv"
)

// checkConfigDrive reads the iLO-shaped BMC's state (rackfence-bmcsim
// --fetch-media): r1-web's config drive must be inserted in a second
// virtual media device, served by agent r1's artifact server and read by
// the BMC; then the drive is fetched like the BMC did and read back with
// isoinfo, and its user_data must be deploy/demo/r1-web/user-data.yaml.
func checkConfigDrive(t *testing.T, bmcPort int) {
	t.Helper()
	isoinfo := testenv.LookPath(t, "isoinfo")
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/sim/state", bmcPort))
	if err != nil {
		t.Fatalf("r1-web's BMC: %v", err)
	}
	defer resp.Body.Close()
	var st struct {
		VirtualMedia []struct {
			Path, Image, ReadError string
			Inserted               bool
			Read                   int64
		} `json:"virtualMedia"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatalf("r1-web's BMC state: %v", err)
	}
	drive := ""
	for _, m := range st.VirtualMedia {
		if m.Inserted && strings.HasSuffix(m.Image, "/config-2.iso") {
			if m.Read == 0 {
				t.Errorf("r1-web's BMC did not read its config drive from %s (%s)", m.Path, m.ReadError)
			}
			drive = m.Image
		}
	}
	if drive == "" {
		t.Fatalf("no config drive inserted in r1-web's BMC: %+v", st.VirtualMedia)
	}
	r, err := http.Get(drive)
	if err != nil {
		t.Fatalf("the artifact server: %v", err)
	}
	defer r.Body.Close()
	iso, err := io.ReadAll(r.Body)
	if err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("GET the config drive: %v %s", err, r.Status)
	}
	f := filepath.Join(t.TempDir(), "config-2.iso")
	if err := os.WriteFile(f, iso, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := exec.Command(isoinfo, "-R", "-i", f, "-x", "/openstack/latest/user_data").Output()
	if err != nil {
		t.Fatalf("isoinfo: %v", err)
	}
	want, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "deploy", "demo", "r1-web", "user-data.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("the config drive's user_data:\n%s\nwant deploy/demo/r1-web/user-data.yaml:\n%s", got, want)
	}
	meta, err := exec.Command(isoinfo, "-R", "-i", f, "-x", "/openstack/latest/meta_data.json").Output()
	if err != nil || !strings.Contains(string(meta), `"hostname"`) || !strings.Contains(string(meta), "ops@example") {
		t.Errorf("the config drive's meta_data.json (%v):\n%s", err, meta)
	}
}
