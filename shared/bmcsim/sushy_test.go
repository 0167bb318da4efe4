package bmcsim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/shared/testenv"
)

// TestSushyDrivesSim runs Ironic's own Redfish client (Debian's
// python3-sushy, with /usr/bin/python3: the pyenv python3 on PATH does not
// see Debian's packages) against bmcsim, as Ironic's redfish driver would.
func TestSushyDrivesSim(t *testing.T) {
	testenv.RequirePython(t, "sushy", "python3-sushy (Debian)")
	py := "/usr/bin/python3"

	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	sim, err := Start(Config{Hosts: 2, AuditPath: audit, PowerOn: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()

	p := testenv.Start(t, "sushy", py, nil, "testdata/sushy_drive.py", sim.URL(1), "admin", "password", "http://images/ipa.iso")
	err, done := p.Wait(3 * time.Minute)
	out := p.Output()
	if !done {
		t.Fatalf("sushy did not finish in 3 minutes:\n%s", out)
	}
	if err != nil {
		t.Fatalf("sushy run failed: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var got struct {
		Session          bool     `json:"session"`
		System           string   `json:"system"`
		AfterOff         string   `json:"after_off"`
		Boot             []string `json:"boot"`
		AfterOn          string   `json:"after_on"`
		MediaFound       bool     `json:"media_found"`
		MediaAfterInsert []any    `json:"media_after_insert"`
		MediaAfterEject  []any    `json:"media_after_eject"`
		WrongPassword    string   `json:"wrong_password"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("sushy output: %v\n%s", err, out)
	}
	t.Logf("sushy saw: %+v", got)
	switch {
	case !got.Session:
		t.Error("sushy did not get a session (fell back to basic auth?)")
	case got.System != "1":
		t.Errorf("system identity %q", got.System)
	case !strings.HasSuffix(strings.ToLower(got.AfterOff), ".off"):
		t.Errorf("power after ForceOff: %s", got.AfterOff)
	case !strings.HasSuffix(strings.ToLower(got.AfterOn), ".on"):
		t.Errorf("power after On: %s", got.AfterOn)
	case len(got.Boot) != 2 || !strings.Contains(strings.ToLower(got.Boot[0]), "pxe") || !strings.Contains(strings.ToLower(got.Boot[1]), "once"):
		t.Errorf("boot override after PXE once: %v", got.Boot)
	case !got.MediaFound:
		t.Error("sushy found no CD virtual media through the system's manager")
	case len(got.MediaAfterInsert) != 2 || got.MediaAfterInsert[0] != "http://images/ipa.iso" || got.MediaAfterInsert[1] != true:
		t.Errorf("media after insert: %v", got.MediaAfterInsert)
	case len(got.MediaAfterEject) != 2 || got.MediaAfterEject[1] != false:
		t.Errorf("media after eject: %v", got.MediaAfterEject)
	case got.WrongPassword != "refused":
		t.Errorf("wrong password: %s", got.WrongPassword)
	}
	st := sim.State(1)
	if st.Power != "On" || st.LastBoot != "Pxe" || st.Media.Inserted {
		t.Errorf("sim state after sushy: %+v", st)
	}
	if sim.State(0).Mutations != 0 {
		t.Error("BMC 0 was touched")
	}
	// The audit names sushy's calls: ForceOff, the boot PATCH, On, media.
	b, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`ForceOff`, `"method":"PATCH"`, `\"ResetType\":\"On\"`, `VirtualMedia.InsertMedia`, `VirtualMedia.EjectMedia`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("audit lacks %s:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), "password") {
		t.Errorf("audit holds a password:\n%s", b)
	}
}
