package artifact

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
	"time"
)

// driveName is the file name of every drive URL (BMCs like a .iso).
const driveName = "config-2.iso"

type drive struct {
	host  string
	image []byte
	mod   time.Time // published
	read  time.Time // first read completely; zero before. s.mu held.
}

// DriveStatus is what the server knows of a host's config drive, without
// its URL (whoever has the URL can read the host's user data).
type DriveStatus struct {
	// Size is the drive's size in bytes.
	Size int64
	// PublishedAt is when the drive was published.
	PublishedAt time.Time
	// ReadAt is when a GET of the drive (the whole drive or the range
	// asked for) was first answered in full; zero before.
	ReadAt time.Time
}

// DriveStatus reports host's config drive; false when it has none.
func (s *Server) DriveStatus(host string) (DriveStatus, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tok, ok := s.drives.byHost[host]
	if !ok {
		return DriveStatus{}, false
	}
	d := s.drives.byToken[tok]
	return DriveStatus{Size: int64(len(d.image)), PublishedAt: d.mod, ReadAt: d.read}, true
}

// driveTable maps a token to a drive and a host to its token. s.mu held.
type driveTable struct {
	byToken map[string]*drive
	byHost  map[string]string
}

func (t *driveTable) init() {
	t.byToken = map[string]*drive{}
	t.byHost = map[string]string{}
}

// PublishDrive serves img as host's config drive and returns its URL: a
// new random token unless the host's current drive has the same content
// (so a retried provision inserts the same URL). It replaces the host's
// previous drive.
func (s *Server) PublishDrive(host string, img []byte) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if tok, ok := s.drives.byHost[host]; ok {
		if bytes.Equal(s.drives.byToken[tok].image, img) {
			return s.driveURL(tok), nil
		}
		delete(s.drives.byToken, tok)
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(b)
	s.drives.byToken[tok] = &drive{host: host, image: img, mod: time.Now()}
	s.drives.byHost[host] = tok
	s.m.drives.Set(float64(len(s.drives.byToken)))
	s.log.Info("config drive published", "host", host, "bytes", len(img))
	return s.driveURL(tok), nil
}

// RemoveDrive stops serving host's config drive (nothing when it has none).
func (s *Server) RemoveDrive(host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tok, ok := s.drives.byHost[host]
	if !ok {
		return
	}
	delete(s.drives.byHost, host)
	delete(s.drives.byToken, tok)
	s.m.drives.Set(float64(len(s.drives.byToken)))
	s.log.Info("config drive removed", "host", host)
}

// HasDrive reports whether host has a published drive.
func (s *Server) HasDrive(host string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.drives.byHost[host]
	return ok
}

func (s *Server) driveURL(tok string) string { return s.base + "/drives/" + tok + "/" + driveName }

func (s *Server) serveDrive(w http.ResponseWriter, r *http.Request, rest string) {
	tok, name, _ := strings.Cut(rest, "/")
	s.mu.Lock()
	d := s.drives.byToken[tok]
	s.mu.Unlock()
	if d == nil || name != driveName {
		// The same answer for a wrong token and a removed drive.
		http.NotFound(w, r)
		return
	}
	cw := &countingWriter{ResponseWriter: w, served: s.m.served.WithLabelValues("configdrive")}
	w.Header().Set("Cache-Control", "no-store")
	http.ServeContent(cw, r, driveName, d.mod, bytes.NewReader(d.image))
	s.log.Debug("config drive served", "host", d.host, "remote", r.RemoteAddr, "range", r.Header.Get("Range"), "bytes", cw.n)
	if r.Method != http.MethodGet || !cw.complete() {
		return
	}
	s.mu.Lock()
	first := d.read.IsZero()
	if first {
		d.read = time.Now()
	}
	s.mu.Unlock()
	if first {
		s.m.drivesRead.Inc()
		s.log.Info("config drive read", "host", d.host, "remote", r.RemoteAddr, "range", r.Header.Get("Range"), "bytes", cw.n)
	}
}
