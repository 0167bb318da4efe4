package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/rackfence/rackfence/shared/wire"
	"github.com/rackfence/rackfence/testkit/procstat"
)

// Operator modes: how the operators of a fleet run list every host.
const (
	// OpUnpaged: one GET /v1/hosts answering the whole list.
	OpUnpaged = "unpaged"
	// OpPaged: pages of whole hosts (limit, continue).
	OpPaged = "paged"
	// OpSummary: pages of summaries, as rackfencectl host list reads.
	OpSummary = "summary"
)

// OperatorModes are the modes a run measures, in order: the unpaged one
// last, so the memory it leaves does not count against the others.
var OperatorModes = []string{OpSummary, OpPaged, OpUnpaged}

// OperatorPhase is what one mode of operators measured: Operators
// clients each listing every host every Every, and one client following
// the fleet watch, over Window.
type OperatorPhase struct {
	Mode          string
	Operators     int
	Every, Window time.Duration
	Lists, Errors int
	// WentOn counts the paged lists that outlived their view (410
	// list_expired) and went on after their last host (after=).
	WentOn        int
	P50, P99, Max time.Duration
	// BytesPerList is the mean answer bytes of one whole list (all pages).
	BytesPerList float64
	// Pages per list.
	PagesPerList float64
	// RSS in KiB: the highest sample (every 250 ms) over the window, and
	// Settle after the operators stopped.
	RSSPeak, RSSSettled int64
	// HeapPeak is the coordinator's Go heap in use at its highest sample
	// (bytes, once a second): unlike RSS it falls after a collection, so
	// an earlier mode's peak does not carry into the next.
	HeapPeak     float64
	WatchAnswers int
}

// operators runs every mode of OperatorModes one after another.
func (f *fleet) operators(ctx context.Context) ([]OperatorPhase, error) {
	var out []OperatorPhase
	for _, m := range OperatorModes {
		f.say("operators: %d listing every host (%s) every %s, one following the watch, for %s", f.cfg.Operators, m, f.cfg.OperatorEvery, f.cfg.OperatorWindow)
		p, err := f.operatorPhase(ctx, m)
		if err != nil {
			return out, err
		}
		out = append(out, p)
	}
	return out, nil
}

func (f *fleet) operatorPhase(ctx context.Context, mode string) (OperatorPhase, error) {
	p := OperatorPhase{Mode: mode, Operators: f.cfg.Operators, Every: f.cfg.OperatorEvery, Window: f.cfg.OperatorWindow}
	wctx, cancel := context.WithTimeout(ctx, f.cfg.OperatorWindow)
	defer cancel()
	var mu sync.Mutex
	var lat []time.Duration
	var bytesAll, pagesAll int64
	var wg sync.WaitGroup
	for range f.cfg.Operators {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hc := NewHTTPClientFor(1, f.token)
			hc.Timeout = 2 * time.Minute
			var buf bytes.Buffer
			t := time.NewTicker(f.cfg.OperatorEvery)
			defer t.Stop()
			for wctx.Err() == nil {
				t0 := time.Now()
				n, pages, wentOn, err := listHosts(wctx, hc, f.coordURL, f.token, mode, f.cfg.OperatorChunk, &buf)
				d := time.Since(t0)
				mu.Lock()
				p.WentOn += wentOn
				if err != nil {
					if wctx.Err() == nil {
						p.Errors++
					}
				} else {
					lat = append(lat, d)
					bytesAll += n
					pagesAll += int64(pages)
				}
				mu.Unlock()
				select {
				case <-t.C:
				case <-wctx.Done():
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		// From the current index: the fleet's changes, not its inventory.
		applied, _ := f.metric("rackfence_raft_applied_index")
		idx := uint64(applied)
		for wctx.Err() == nil {
			r, err := f.admin.Watch(wctx, "", idx, 10*time.Second)
			if err != nil {
				select {
				case <-time.After(time.Second):
				case <-wctx.Done():
				}
				continue
			}
			idx = r.Index
			mu.Lock()
			p.WatchAnswers++
			mu.Unlock()
		}
	}()
	tick := time.NewTicker(250 * time.Millisecond)
	for n := 0; wctx.Err() == nil; n++ {
		select {
		case <-tick.C:
			p.RSSPeak = max(p.RSSPeak, procstat.RSSKiB(f.coord.pid()))
			if n%4 == 0 {
				if h, err := f.metric("go_memstats_heap_inuse_bytes"); err == nil {
					p.HeapPeak = max(p.HeapPeak, h)
				}
			}
		case <-wctx.Done():
		}
	}
	tick.Stop()
	wg.Wait()
	p.Lists = len(lat)
	if p.Lists > 0 {
		p.P50, p.P99, p.Max = spread(lat)
		p.BytesPerList = float64(bytesAll) / float64(p.Lists)
		p.PagesPerList = float64(pagesAll) / float64(p.Lists)
	}
	select {
	case <-time.After(f.cfg.OperatorSettle):
	case <-ctx.Done():
		return p, ctx.Err()
	}
	p.RSSSettled = procstat.RSSKiB(f.coord.pid())
	return p, nil
}

// listRestarts bounds how many times in a row a paged list goes on after
// list_expired without a host read in between (as shared/client does).
const listRestarts = 3

// listHosts reads every host at base as mode lists them, as an operator's
// client does: a paged list whose view the coordinator no longer keeps
// (410 list_expired: a list slower than a minute, a leader change) goes
// on after the last host read (after=NAME) in a new list. It returns the
// answer bytes, the pages read and how many times the list went on so.
func listHosts(ctx context.Context, hc *http.Client, base, token, mode string, chunk int, buf *bytes.Buffer) (total int64, pages, restarts int, err error) {
	cont, after, last, inRow := "", "", "", 0
	for pages = 1; ; pages++ {
		q := url.Values{}
		if mode != OpUnpaged {
			q.Set(wire.ParamLimit, strconv.Itoa(chunk))
			if mode == OpSummary {
				q.Set(wire.ParamView, wire.ViewSummary)
			}
			if cont != "" {
				q.Set(wire.ParamContinue, cont)
			} else if after != "" {
				q.Set(wire.ParamAfter, after)
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/hosts?"+q.Encode(), nil)
		if err != nil {
			return total, pages, restarts, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := hc.Do(req)
		if err != nil {
			return total, pages, restarts, err
		}
		buf.Reset()
		n, err := io.Copy(buf, resp.Body)
		resp.Body.Close()
		total += n
		if err != nil {
			return total, pages, restarts, err
		}
		if resp.StatusCode == http.StatusGone && cont != "" && last != "" && inRow < listRestarts && listExpired(buf.Bytes()) {
			cont, after = "", last
			restarts++
			inRow++
			continue
		}
		if resp.StatusCode != http.StatusOK {
			return total, pages, restarts, fmt.Errorf("GET /v1/hosts: %d: %.200s", resp.StatusCode, buf.Bytes())
		}
		cont = continueOf(buf.Bytes())
		if mode != OpUnpaged && cont != "" {
			name, err := lastHostName(buf.Bytes())
			if err != nil {
				return total, pages, restarts, err
			}
			if name != "" {
				last, inRow = name, 0
			}
		}
		if cont == "" {
			return total, pages, restarts, nil
		}
	}
}

// listExpired says whether an error answer is list_expired.
func listExpired(b []byte) bool {
	var e wire.ErrorBody
	return json.Unmarshal(b, &e) == nil && e.Error.Code == wire.CodeListExpired
}

// lastHostName is the name of a host-list page's last host ("" for no
// host). The coordinator writes each host on a line of its own, name
// first, so it is read from the last line without decoding the page;
// a page written otherwise is decoded.
func lastHostName(b []byte) (string, error) {
	if end := bytes.LastIndex(b, []byte(`],"index":`)); end > 0 {
		items := b[:end]
		start := bytes.LastIndex(items, []byte("\n,"))
		if start >= 0 {
			start += 2
		} else if start = bytes.Index(items, []byte(`[`)); start >= 0 {
			start++
		}
		const key = `{"name":"`
		if start >= 0 && bytes.HasPrefix(items[start:], []byte(key)) {
			rest := items[start+len(key):]
			if j := bytes.IndexByte(rest, '"'); j > 0 {
				return string(rest[:j]), nil
			}
		}
		if start >= 0 && len(bytes.TrimSpace(items[start:])) == 0 {
			return "", nil
		}
	}
	var page struct {
		Items []struct {
			Name string `json:"name"`
		} `json:"items"`
	}
	if err := json.Unmarshal(b, &page); err != nil {
		return "", fmt.Errorf("GET /v1/hosts: a page that is not a host list: %v", err)
	}
	if n := len(page.Items); n > 0 {
		return page.Items[n-1].Name, nil
	}
	return "", nil
}

// continueOf finds the continue token at the end of a list answer (the
// coordinator writes it last) without decoding the items.
func continueOf(b []byte) string {
	const key = `"continue":"`
	i := bytes.LastIndex(b, []byte(key))
	if i < 0 {
		return ""
	}
	rest := b[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}

// operatorFigures are the operator phases as report lines, with each
// mode's ratios to the unpaged one.
func (r FleetResult) operatorFigures() []FleetFigure {
	var base *OperatorPhase
	for i := range r.Operators {
		if r.Operators[i].Mode == OpUnpaged {
			base = &r.Operators[i]
		}
	}
	msf := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	var out []FleetFigure
	for _, p := range r.Operators {
		v := fmt.Sprintf("%d operators every %s over %s: %d lists (%d failed, %d went on after list_expired), %.1f pages each; list p50 %.1f ms, p99 %.1f ms; %.0f KiB per list; coordinator RSS peak %d KiB (%.0f B/host), settled %d KiB (%.0f B/host); Go heap in use peak %.0f B/host; %d watch answers",
			p.Operators, p.Every, p.Window, p.Lists, p.Errors, p.WentOn, p.PagesPerList, msf(p.P50), msf(p.P99), p.BytesPerList/1024,
			p.RSSPeak, r.PerHost(p.RSSPeak), p.RSSSettled, r.PerHost(p.RSSSettled), r.HeapPerHost(p.HeapPeak), p.WatchAnswers)
		if base != nil && p.Mode != OpUnpaged && base.P50 > 0 && base.BytesPerList > 0 && base.HeapPeak > 0 {
			v += fmt.Sprintf(" (vs unpaged: p50 ×%.2f, p99 ×%.2f, bytes ×%.2f, heap peak ×%.2f)",
				float64(p.P50)/float64(base.P50), float64(p.P99)/float64(base.P99), p.BytesPerList/base.BytesPerList, p.HeapPeak/base.HeapPeak)
		}
		out = append(out, FleetFigure{"operators, " + p.Mode, v, ""})
	}
	return out
}
