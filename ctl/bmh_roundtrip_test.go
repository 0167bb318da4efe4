package ctl

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rackfence/rackfence/ctl/importer"
	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// hostDiffs lists the differences between two clusters' hosts: spec
// fields, labels, the detach intent and power-off holds.
func hostDiffs(t *testing.T, a, b *coord) []string {
	t.Helper()
	ctx := context.Background()
	la, err := a.admin.ListHosts(ctx, client.HostFilter{})
	if err != nil {
		t.Fatal(err)
	}
	lb, err := b.admin.ListHosts(ctx, client.HostFilter{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]wire.Host{}
	for _, h := range lb.Items {
		byName[h.Name] = h
	}
	var out []string
	if len(la.Items) != len(lb.Items) {
		out = append(out, fmt.Sprintf("%d hosts, then %d", len(la.Items), len(lb.Items)))
	}
	for _, h := range la.Items {
		g, ok := byName[h.Name]
		if !ok {
			out = append(out, h.Name+": missing")
			continue
		}
		for _, f := range specDiff(specOnly(h), specOnly(g)) {
			out = append(out, h.Name+": "+f)
		}
		if (h.Intents != nil && h.Intents.Detach != nil) != (g.Intents != nil && g.Intents.Detach != nil) {
			out = append(out, h.Name+": detach intent")
		}
	}
	return out
}

// recordDiffs compares the records both clusters hold (usernames, data keys).
func recordDiffs(t *testing.T, a, b *coord) []string {
	t.Helper()
	ctx := context.Background()
	la, err := a.admin.ListCredentials(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range la.Items {
		g, err := b.admin.GetCredentials(ctx, c.Name)
		if err != nil {
			out = append(out, c.Name+": "+err.Error())
			continue
		}
		if g.Username != c.Username || strings.Join(g.DataKeys, ",") != strings.Join(c.DataKeys, ",") {
			out = append(out, fmt.Sprintf("%s: %+v, then %+v", c.Name, c, g))
		}
	}
	return out
}

// TestExportBMHRoundTrip: hosts applied from metal3 documents, exported
// with host export -o bmh and applied to a fresh cluster are identical.
// Passwords are withheld by the export, so the test gives the second
// cluster the records first (as an operator would, with the passwords).
func TestExportBMHRoundTrip(t *testing.T) {
	a := startCoordinator(t)
	a.mustCtl(t, "", "host", "apply", "-f", "testdata/metal3/list.yaml", "-f", "testdata/metal3/documents.yaml", "-f", "testdata/metal3/daytwo.yaml", "--rack-from", "label:rack", "--rack", "r2")
	if h, err := a.admin.GetHost(context.Background(), "storage-0"); err != nil || h.BIOS == nil || h.BIOS.Settings["NumCores"] != "12" || len(h.Firmware) != 2 || h.RAID == nil || len(h.RAID.HardwareRAIDVolumes) != 2 || h.UpdatePolicy == nil {
		t.Fatalf("storage-0 did not arrive with its day-two spec: %+v %v", h, err)
	}
	a.mustCtl(t, "name: plain-1\nrack: r3\nbmc: {address: \"redfish+http://10.0.0.9/redfish/v1/Systems/9\"}\nconsumer: someone\nimage: {url: \"http://i/x.iso\"}\nrootDeviceHints: {minSizeGigabytes: 20, rotational: false}\n", "host", "apply", "-f", "-")
	out := a.mustCtl(t, "", "host", "export", "-o", "bmh")
	for _, want := range []string{"kind: BareMetalHost", "credentialsName: worker-0-bmc-secret", "rackfence.io/withheld: password", "baremetalhost.metal3.io/detached",
		"kind: HostFirmwareSettings", "kind: HostFirmwareComponents", "kind: HostUpdatePolicy", "hardwareRAIDVolumes:", "virtualizationEnabled: true"} {
		if !strings.Contains(out.stdout, want) {
			t.Errorf("export lacks %q:\n%s", want, out.stdout)
		}
	}
	if strings.Contains(out.stdout, "cGFzc3dvcmQ=") || strings.Contains(out.stdout, "password: password") {
		t.Errorf("export revealed a password:\n%s", out.stdout)
	}

	b := startCoordinator(t)
	r := b.ctl(t, out.stdout, "host", "apply", "-f", "-")
	if r.code == 0 || !strings.Contains(r.stdout, "neither in the input nor a credentials record") {
		t.Errorf("apply without the records must refuse:\n%s", r)
	}
	ctx := context.Background()
	la, err := a.admin.ListCredentials(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range la.Items {
		cr := wire.Credentials{Username: c.Username}
		if c.Username != "" {
			cr.Password = "pw"
		}
		for _, k := range c.DataKeys {
			if cr.Data == nil {
				cr.Data = map[string]string{}
			}
			cr.Data[k] = "x"
		}
		if err := b.admin.SetCredentials(ctx, c.Name, cr); err != nil {
			t.Fatal(err)
		}
	}
	b.mustCtl(t, out.stdout, "host", "apply", "-f", "-")
	if d := append(hostDiffs(t, a, b), recordDiffs(t, a, b)...); len(d) > 0 {
		t.Errorf("%d round-trip differences:\n%s", len(d), strings.Join(d, "\n"))
	}
	r = b.mustCtl(t, out.stdout, "host", "apply", "-f", "-", "--dry-run")
	if strings.Contains(r.stdout, "would be") || strings.Contains(r.stdout, "would change") {
		t.Errorf("applying the export again is not a no-op:\n%s", r)
	}
}

// TestExportBMHIncludeSecrets: with --include-secrets the records travel
// too (passwords and data values equal), and the reveal is audited.
func TestExportBMHIncludeSecrets(t *testing.T) {
	a := startCoordinator(t)
	a.mustCtl(t, "", "host", "apply", "-f", "testdata/metal3/list.yaml", "--rack-from", "label:rack")
	out := a.mustCtl(t, "", "host", "export", "-o", "bmh", "--include-secrets")
	if strings.Contains(out.stdout, importer.AnnWithheld) || !strings.Contains(out.stdout, "cGFzc3dvcmQ=") {
		t.Errorf("--include-secrets output:\n%s", out.stdout)
	}
	if au := a.mustCtl(t, "", "audit", "-o", "json"); !strings.Contains(au.stdout, "worker-0-bmc-secret") {
		t.Errorf("the reveal is not in the audit trail:\n%s", au.stdout)
	}
	b := startCoordinator(t)
	b.mustCtl(t, out.stdout, "host", "apply", "-f", "-")
	d := append(hostDiffs(t, a, b), recordDiffs(t, a, b)...)
	ctx := context.Background()
	for _, n := range []string{"worker-0-bmc-secret", "worker-1-bmc-secret", "worker-0-user-data", "worker-0-network-data"} {
		ra, err1 := a.admin.RevealCredentials(ctx, n)
		rb, err2 := b.admin.RevealCredentials(ctx, n)
		if err1 != nil || err2 != nil || ra.Password != rb.Password || fmt.Sprint(ra.Data) != fmt.Sprint(rb.Data) {
			d = append(d, fmt.Sprintf("%s: %+v %v, then %+v %v", n, ra, err1, rb, err2))
		}
	}
	if len(d) > 0 {
		t.Errorf("%d round-trip differences:\n%s", len(d), strings.Join(d, "\n"))
	}
}

// TestBMHFigures imports RACKFENCE_BMH_HOSTS (default 1000) generated
// BareMetalHosts with their Secrets and reports seconds, API calls (the
// coordinator's rackfence_http_requests_total) and round-trip differences.
// Run: RACKFENCE_BMH_FIGURES=1 go test ./ctl -run TestBMHFigures -v
func TestBMHFigures(t *testing.T) {
	if os.Getenv("RACKFENCE_BMH_FIGURES") == "" {
		t.Skip("figures: set RACKFENCE_BMH_FIGURES=1")
	}
	n := 1000
	if v := os.Getenv("RACKFENCE_BMH_HOSTS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	var sb strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "---\napiVersion: v1\nkind: Secret\nmetadata: {name: node-%d-bmc, namespace: metal3}\ndata: {username: YWRtaW4=, password: cGFzc3dvcmQ=}\n", i)
		fmt.Fprintf(&sb, "---\napiVersion: metal3.io/v1alpha1\nkind: BareMetalHost\nmetadata: {name: node-%d, namespace: metal3, labels: {rack: r%d, role: worker}}\n"+
			"spec:\n  online: true\n  bootMACAddress: \"52:54:00:%02x:%02x:%02x\"\n  bmc: {address: \"redfish-virtualmedia://10.1.%d.%d/redfish/v1/Systems/1\", credentialsName: node-%d-bmc}\n"+
			"  image: {url: \"http://images/os.qcow2\", checksum: \"9f6c6e1f3b7c3e0d4d4b4c1a1a5e8e2f0c7b6a5d4e3f2a1b0c9d8e7f6a5b4c3d\", format: qcow2}\n"+
			"status: {provisioning: {state: provisioned}}\n", i, i%20, i>>16&255, i>>8&255, i&255, i/250, i%250, i)
	}
	file := filepath.Join(t.TempDir(), "fleet.yaml")
	if err := os.WriteFile(file, []byte(sb.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startCoordinator(t)
	before := requestCount(t, a)
	start := time.Now()
	a.mustCtl(t, "", "host", "apply", "-f", file, "--rack-from", "label:rack")
	secs := time.Since(start).Seconds()
	calls := requestCount(t, a) - before - 1 // the second scrape
	start = time.Now()
	a.mustCtl(t, "", "host", "apply", "-f", file, "--rack-from", "label:rack")
	again := time.Since(start).Seconds()
	out := a.mustCtl(t, "", "host", "export", "-o", "bmh")
	b := startCoordinator(t)
	b.mustCtl(t, out.stdout, "host", "apply", "-f", "-", "--allow-missing-secrets")
	diffs := hostDiffs(t, a, b)
	t.Logf("FIGURES: %d BareMetalHosts + %d Secrets: import %.2fs, %d API calls; re-run (all unchanged) %.2fs; round-trip host differences %d",
		n, n, secs, calls, again, len(diffs))
	if len(diffs) > 0 {
		t.Errorf("round-trip differences: %q", diffs[:min(len(diffs), 10)])
	}
}

// requestCount sums rackfence_http_requests_total from /metrics (which
// answers without a token).
func requestCount(t *testing.T, c *coord) int {
	t.Helper()
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // test-only: the metrics of a local test coordinator
	resp, err := hc.Get(c.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	total := 0.0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "rackfence_http_requests_total{") {
			f := strings.Fields(l)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			total += v
		}
	}
	return int(total)
}
