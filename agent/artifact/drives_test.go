package artifact

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestDriveServedByTokenRangesAndRemoved(t *testing.T) {
	s, _ := newServer(t, "", 0)
	base := serve(t, s)
	img := bytes.Repeat([]byte("config-2 drive "), 1000)
	u, err := s.PublishDrive("h1", img)
	if err != nil {
		t.Fatal(err)
	}
	tok := strings.TrimSuffix(strings.TrimPrefix(u, base+"/drives/"), "/"+driveName)
	if len(tok) != 64 || !strings.HasPrefix(u, base+"/drives/") {
		t.Fatalf("drive URL %s: want %s/drives/<64 hex>/%s", u, base, driveName)
	}
	if code, b := get(t, u, ""); code != http.StatusOK || !bytes.Equal(b, img) {
		t.Fatalf("GET drive: %d, %d bytes", code, len(b))
	}
	if code, b := get(t, u, "bytes=15-29"); code != http.StatusPartialContent || string(b) != "config-2 drive " {
		t.Fatalf("GET drive range: %d %q", code, b)
	}
	// Republishing the same content keeps the URL (a retried provision
	// inserts the same medium); other content gets a new token.
	if u2, _ := s.PublishDrive("h1", img); u2 != u {
		t.Errorf("same content, new URL %s (was %s)", u2, u)
	}
	u3, _ := s.PublishDrive("h1", append([]byte("x"), img...))
	if u3 == u {
		t.Fatal("new content kept the old URL")
	}
	if code, _ := get(t, u, ""); code != http.StatusNotFound {
		t.Errorf("replaced drive's URL answers %d, want 404", code)
	}
	// Nothing is listed, a guessed token finds nothing.
	for _, p := range []string{"/", "/drives/", "/drives/" + strings.Repeat("0", 64) + "/" + driveName, "/images/"} {
		if code, _ := get(t, base+p, ""); code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, code)
		}
	}
	s.RemoveDrive("h1")
	if code, _ := get(t, u3, ""); code != http.StatusNotFound {
		t.Errorf("removed drive answers %d, want 404", code)
	}
	if s.HasDrive("h1") {
		t.Error("HasDrive after RemoveDrive")
	}
	if got := eventually(t, s.m.served.WithLabelValues("configdrive"), float64(len(img)+15)); got != float64(len(img)+15) {
		t.Errorf("served configdrive bytes = %v, want %d", got, len(img)+15)
	}
}

func TestNewRefusesBadURL(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:8080", "ftp://x/"} {
		if _, err := New(Config{BaseURL: u}); err == nil || !strings.Contains(err.Error(), "--artifact-url") {
			t.Errorf("BaseURL %q: err = %v, want one naming --artifact-url", u, err)
		}
	}
}

func TestMetricsLint(t *testing.T) {
	_, reg := newServer(t, t.TempDir(), 1<<20)
	problems, err := testutil.GatherAndLint(reg)
	if err != nil || len(problems) != 0 {
		t.Fatalf("promlint: %v %+v", err, problems)
	}
}

// DriveStatus: size and publication at once; a HEAD and a wrong token are
// no read; the first GET answered in full is, and a later one keeps it.
func TestDriveStatusRead(t *testing.T) {
	s, _ := newServer(t, "", 0)
	serve(t, s)
	if _, ok := s.DriveStatus("h1"); ok {
		t.Fatal("a status for a host without a drive")
	}
	img := bytes.Repeat([]byte("config-2 drive "), 1000)
	before := time.Now()
	u, err := s.PublishDrive("h1", img)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := s.DriveStatus("h1")
	if !ok || st.Size != int64(len(img)) || st.PublishedAt.Before(before) || !st.ReadAt.IsZero() {
		t.Fatalf("after publish: %+v %v", st, ok)
	}
	resp, err := http.Head(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if code, _ := get(t, strings.Replace(u, "/drives/", "/drives/0", 1), ""); code != http.StatusNotFound {
		t.Fatalf("wrong token: %d", code)
	}
	if st, _ := s.DriveStatus("h1"); !st.ReadAt.IsZero() {
		t.Fatalf("read at %s after a HEAD and a wrong token", st.ReadAt)
	}
	if code, _ := get(t, u, "bytes=0-2047"); code != http.StatusPartialContent {
		t.Fatalf("GET range: %d", code)
	}
	first, _ := s.DriveStatus("h1")
	if first.ReadAt.IsZero() || first.ReadAt.Before(first.PublishedAt) {
		t.Fatalf("after a range GET: %+v", first)
	}
	get(t, u, "")
	if again, _ := s.DriveStatus("h1"); !again.ReadAt.Equal(first.ReadAt) {
		t.Errorf("a second read moved readAt from %s to %s", first.ReadAt, again.ReadAt)
	}
	if n := testutil.ToFloat64(s.m.drivesRead); n != 1 {
		t.Errorf("drives read metric %v, want 1", n)
	}
}
