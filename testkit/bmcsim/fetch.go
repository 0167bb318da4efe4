package bmcsim

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// mediaClient reads inserted images (Config.FetchMedia).
var mediaClient = &http.Client{Timeout: 30 * time.Second}

// fetchMedia reads the first FetchMediaBytes of device k's image, as a BMC
// reads an inserted medium, and records the result. The insert and PATCH
// handlers call it (without b.mu) as they return, before net/http sends
// their answer: a client that saw the insert answered sees the read.
func (s *Sim) fetchMedia(b *bmc, k int) {
	if !s.cfg.FetchMedia {
		return
	}
	b.mu.Lock()
	m := b.media[k]
	b.mu.Unlock()
	if !m.inserted || m.image == "" || m.read != 0 || m.readErr != "" {
		return
	}
	b.mu.Lock()
	fails := b.knobs.MediaReadFails
	b.mu.Unlock()
	var n int64
	var err error
	if fails {
		err = errMediaReadFails
	} else {
		n, err = readHead(m.image)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if cur := &b.media[k]; cur.image == m.image && cur.inserted {
		cur.read = n
		if err != nil {
			cur.readErr = err.Error()
		}
	}
}

// errMediaReadFails is the read error of Knobs.MediaReadFails.
var errMediaReadFails = errors.New("simulated: the BMC could not fetch the image (knob mediaReadFails)")

func readHead(url string) (int64, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Range", fmt.Sprintf("bytes=0-%d", FetchMediaBytes-1))
	resp, err := mediaClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent && resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.Copy(io.Discard, io.LimitReader(resp.Body, FetchMediaBytes))
}
