package bmcsim

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// Network boot: a system whose Boot lists HttpBootUri takes it by PATCH
// (Knobs.HTTPBootURIFault: refused, or accepted and not kept); a power-on
// whose boot target is UefiHttp or Pxe "boots from the network": it
// records the URL it boots (HttpBootUri, or Knobs.PXEImageURL for Pxe)
// and, with Config.FetchMedia, reads its first FetchMediaBytes as a
// firmware fetching the image does (SystemState.NetBoot).

// NetBoot is a system's last boot from the network.
type NetBoot struct {
	// Target is UefiHttp or Pxe.
	Target string `json:"target"`
	// URL is what it booted: HttpBootUri, or Knobs.PXEImageURL for Pxe
	// ("" when the simulated network hands it nothing).
	URL string `json:"url,omitempty"`
	// Read and ReadError: with Config.FetchMedia, the bytes read of URL
	// and why it could not be read.
	Read      int64  `json:"read,omitempty"`
	ReadError string `json:"readError,omitempty"`
	// Boots counts the system's boots from the network.
	Boots int `json:"boots"`
}

// HTTPBootURIFault values (Knobs.HTTPBootURIFault).
const (
	HTTPBootURIRefuse = "refuse"
	HTTPBootURIIgnore = "ignore"
)

func (k Knobs) validateNetBoot() error {
	switch k.HTTPBootURIFault {
	case "", HTTPBootURIRefuse, HTTPBootURIIgnore:
	default:
		return fmt.Errorf("%w: httpBootUriFault %q; use refuse, ignore or nothing", ErrKnobs, k.HTTPBootURIFault)
	}
	if k.PXEImageURL != "" {
		if u, err := url.Parse(k.PXEImageURL); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return fmt.Errorf("%w: pxeImageUrl %q is not an http(s) URL", ErrKnobs, k.PXEImageURL)
		}
	}
	return nil
}

// patchHTTPBootURI applies a PATCH of Boot.HttpBootUri to nb; false when
// it answered an error. b.mu held.
func patchHTTPBootURI(w http.ResponseWriter, b *bmc, res *resource, uri string, nb *BootOverride) bool {
	if !res.httpBootURI {
		writeError(w, http.StatusBadRequest, "Base.1.0.PropertyUnknown", "HttpBootUri is not a property of "+res.path+"'s Boot")
		return false
	}
	if uri != "" {
		if u, err := url.Parse(uri); err != nil || u.Host == "" {
			writeError(w, http.StatusBadRequest, "Base.1.0.PropertyValueFormatError", "HttpBootUri "+strconv.Quote(uri)+" is not a URI")
			return false
		}
	}
	switch b.knobs.HTTPBootURIFault {
	case HTTPBootURIRefuse:
		writeError(w, http.StatusBadRequest, "Base.1.0.PropertyValueNotInList", "HttpBootUri "+strconv.Quote(uri)+" cannot be used (simulated: knob httpBootUriFault refuse)")
		return false
	case HTTPBootURIIgnore:
		return true // accepted, not kept
	}
	nb.HTTPBootURI = uri
	return true
}

// netBoot records system j's boot from dev when it is the network and,
// with Config.FetchMedia, starts reading what it boots. b.mu held.
func (b *bmc) netBoot(j int, dev string) {
	if dev != "UefiHttp" && dev != "Pxe" {
		return
	}
	s := &b.sys[j]
	u := s.boot.HTTPBootURI
	if dev == "Pxe" {
		u = b.knobs.PXEImageURL
	}
	s.net = NetBoot{Target: dev, URL: u, Boots: s.net.Boots + 1}
	if b.sim == nil || !b.sim.cfg.FetchMedia || u == "" {
		return
	}
	boots, fails := s.net.Boots, b.knobs.MediaReadFails
	go func() {
		var n int64
		var err error
		if fails {
			err = errMediaReadFails
		} else {
			n, err = readHead(u)
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		if cur := &b.sys[j].net; cur.Boots == boots {
			cur.Read = n
			if err != nil {
				cur.ReadError = err.Error()
			}
		}
	}()
}
