package configdrive_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/agent/configdrive"
	"github.com/rackfence/rackfence/agent/provisioner"
	"github.com/rackfence/rackfence/testkit/testenv"
)

// isoinfo (Debian genisoimage, deploy/peers/install.sh) reads the drive
// back: a real ISO 9660 / Rock Ridge reader, not this package's. Missing:
// the test fails in CI and skips loudly elsewhere.
func needIsoinfo(t *testing.T) string {
	t.Helper()
	return testenv.LookPath(t, "isoinfo")
}

func isoinfo(t *testing.T, bin, iso string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, append([]string{"-i", iso}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("isoinfo %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func sample() configdrive.Input {
	return configdrive.Input{UUID: "0b8c6a5e-8f55-4a7b-9b6f-3c1c2e0d7f11", Name: "h1", Hostname: "h1",
		Content: provisioner.ConfigDrive{
			UserData:    []byte("#cloud-config\nusers:\n  - name: ops\n    ssh_authorized_keys: [\"ssh-ed25519 AAAA ops\"]\n"),
			NetworkData: []byte(`{"links":[{"id":"eth0","type":"phy","ethernet_mac_address":"52:54:00:00:00:01"}],"networks":[],"services":[]}`),
			MetaData:    []byte(`{"public_keys":{"ops":"ssh-ed25519 AAAA ops"},"hostname":"h1.example"}`),
		}}
}

func TestDriveReadBackByIsoinfo(t *testing.T) {
	bin := needIsoinfo(t)
	in := sample()
	img, err := configdrive.Build(in)
	if err != nil {
		t.Fatal(err)
	}
	iso := filepath.Join(t.TempDir(), "cd.iso")
	if err := os.WriteFile(iso, img, 0o600); err != nil {
		t.Fatal(err)
	}
	d := isoinfo(t, bin, iso, "-d")
	if !strings.Contains(d, "Volume id: config-2\n") {
		t.Fatalf("volume label: isoinfo -d says\n%s", d)
	}
	if !strings.Contains(d, "Rock Ridge signatures version 1 found") {
		t.Fatalf("no Rock Ridge: isoinfo -d says\n%s", d)
	}
	// blkid (util-linux) is how cloud-init finds the drive: LABEL=config-2.
	if blkid, err := exec.LookPath("blkid"); err == nil {
		out, err := exec.Command(blkid, "-o", "export", iso).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "\nLABEL=config-2\n") || !strings.Contains(string(out), "\nTYPE=iso9660\n") {
			t.Errorf("blkid -o export: %v\n%s", err, out)
		}
	} else {
		t.Log("SKIPPING the blkid check: blkid (util-linux) is not installed")
	}
	list := isoinfo(t, bin, iso, "-R", "-f")
	for _, want := range []string{"/openstack", "/openstack/latest", "/" + configdrive.MetaDataPath,
		"/" + configdrive.UserDataPath, "/" + configdrive.NetworkDataPath} {
		if !strings.Contains("\n"+list, "\n"+want+"\n") {
			t.Errorf("isoinfo -R -f lacks %s:\n%s", want, list)
		}
	}
	if strings.Count(strings.TrimSpace(list), "\n") != 4 {
		t.Errorf("isoinfo -R -f lists more than the five paths:\n%s", list)
	}
	get := func(p string) []byte { return []byte(isoinfo(t, bin, iso, "-R", "-x", "/"+p)) }
	if got := get(configdrive.UserDataPath); !bytes.Equal(got, in.Content.UserData) {
		t.Errorf("user_data = %q, want %q", got, in.Content.UserData)
	}
	if got := get(configdrive.NetworkDataPath); !bytes.Equal(got, in.Content.NetworkData) {
		t.Errorf("network_data.json = %q, want %q", got, in.Content.NetworkData)
	}
	var md map[string]any
	if err := json.Unmarshal(get(configdrive.MetaDataPath), &md); err != nil {
		t.Fatalf("meta_data.json: %v", err)
	}
	keys, _ := md["public_keys"].(map[string]any)
	if md["uuid"] != in.UUID || md["name"] != "h1" || md["hostname"] != "h1.example" || keys["ops"] != "ssh-ed25519 AAAA ops" {
		t.Errorf("meta_data.json = %v", md)
	}
	// The plain ISO 9660 view (no Rock Ridge) has the upper-case names.
	plain := isoinfo(t, bin, iso, "-f")
	if !strings.Contains(plain, "/OPENSTACK/LATEST/META_DATA.JSON;1") {
		t.Errorf("isoinfo -f (ISO 9660 names):\n%s", plain)
	}
}

func TestDriveWithoutOptionalFiles(t *testing.T) {
	bin := needIsoinfo(t)
	img, err := configdrive.Build(configdrive.Input{UUID: "u", Name: "h2", Hostname: "h2",
		Content: provisioner.ConfigDrive{UserData: []byte("#!/bin/sh\necho hi\n")}})
	if err != nil {
		t.Fatal(err)
	}
	iso := filepath.Join(t.TempDir(), "cd.iso")
	if err := os.WriteFile(iso, img, 0o600); err != nil {
		t.Fatal(err)
	}
	list := isoinfo(t, bin, iso, "-R", "-f")
	if strings.Contains(list, "network_data") {
		t.Errorf("network_data.json without network data:\n%s", list)
	}
	var md map[string]any
	if err := json.Unmarshal([]byte(isoinfo(t, bin, iso, "-R", "-x", "/"+configdrive.MetaDataPath)), &md); err != nil {
		t.Fatal(err)
	}
	if md["hostname"] != "h2" || md["uuid"] != "u" {
		t.Errorf("meta_data.json = %v", md)
	}
}

func TestDriveRefusesBadContent(t *testing.T) {
	for _, c := range []struct {
		name string
		cd   provisioner.ConfigDrive
		want string
	}{
		{"meta data array", provisioner.ConfigDrive{MetaData: []byte(`[1]`)}, "metaData must be a JSON object"},
		{"meta data text", provisioner.ConfigDrive{MetaData: []byte(`hostname: x`)}, "metaData must be a JSON object"},
		{"network data text", provisioner.ConfigDrive{NetworkData: []byte(`links: []`)}, "networkData must be JSON"},
	} {
		_, err := configdrive.Build(configdrive.Input{Name: "h", Content: c.cd})
		if !errors.Is(err, configdrive.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want ErrInvalid with %q", c.name, err, c.want)
		}
	}
}

func TestDriveIsDeterministic(t *testing.T) {
	a, err := configdrive.Build(sample())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // a clock-stamped drive would differ now
	b, _ := configdrive.Build(sample())
	if !bytes.Equal(a, b) {
		t.Fatal("two builds of the same content differ")
	}
	other := sample()
	other.Content.UserData = append([]byte("#x\n"), other.Content.UserData...)
	if c, _ := configdrive.Build(other); bytes.Equal(a, c) {
		t.Fatal("different user data, same drive")
	}
}

// A user data of several sectors, not a multiple of 2048 bytes, and an
// empty network data file read back whole.
func TestDriveLargeAndEmptyFiles(t *testing.T) {
	bin := needIsoinfo(t)
	ud := bytes.Repeat([]byte("write_files: [{path: /etc/motd, content: hello}]\n"), 6000)
	img, err := configdrive.Build(configdrive.Input{UUID: "u", Name: "h", Hostname: "h",
		Content: provisioner.ConfigDrive{UserData: ud, NetworkData: []byte{}}})
	if err == nil {
		t.Fatal("empty network data accepted (it is no JSON)")
	}
	img, err = configdrive.Build(configdrive.Input{UUID: "u", Name: "h", Hostname: "h",
		Content: provisioner.ConfigDrive{UserData: ud, MetaData: []byte(" ")}})
	if err != nil {
		t.Fatal(err)
	}
	iso := filepath.Join(t.TempDir(), "cd.iso")
	if err := os.WriteFile(iso, img, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := []byte(isoinfo(t, bin, iso, "-R", "-x", "/"+configdrive.UserDataPath)); !bytes.Equal(got, ud) {
		t.Fatalf("user_data of %d bytes read back as %d bytes", len(ud), len(got))
	}
}
