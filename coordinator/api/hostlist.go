package api

import (
	"io"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// hostQuery is what GET /v1/hosts selects, validated.
type hostQuery struct {
	rack, pstate string
	sel          wire.Selector
	summary      bool
	page         pageReq
	// after: the list starts after this host name ("" = at the first).
	after string
}

func (q *hostQuery) match(h *wire.Host) bool {
	if q.pstate != "" {
		ps := "none"
		if h.Status != nil && h.Status.ProvisioningState != "" {
			ps = h.Status.ProvisioningState
		}
		if ps != q.pstate {
			return false
		}
	}
	return q.sel == nil || q.sel.Matches(h.Labels)
}

// parseHostView reads view (absent: whole hosts).
func parseHostView(c echo.Context) (bool, error) {
	switch v := c.QueryParam(wire.ParamView); v {
	case "":
		return false, nil
	case wire.ViewSummary:
		return true, nil
	default:
		return false, badField(wire.ParamView, "%q is not a view: use summary, or leave view out for whole hosts", v)
	}
}

// parseAfter reads after: a host name (it need not exist any more), not
// with continue (a token already says where its list goes on).
func parseAfter(c echo.Context, page pageReq) (string, error) {
	v, ok := c.QueryParams()[wire.ParamAfter]
	if !ok {
		return "", nil
	}
	if len(v) != 1 {
		return "", badField(wire.ParamAfter, "after is given %d times: give one host name, the last one already read", len(v))
	}
	if page.Token != nil {
		return "", badField(wire.ParamAfter, "after and continue conflict: go on with continue alone, or start a new list after a host with after alone")
	}
	if err := wire.ValidateName(wire.ParamAfter, v[0]); err != nil {
		return "", badField(wire.ParamAfter, "%v: give the name of the last host already read (the list starts with the first host named after it)", err)
	}
	return v[0], nil
}

// serveHosts answers a host list (one page of it when paged) from the
// view of the first page's index, streaming it.
func (s *Server) serveHosts(c echo.Context, q *hostQuery) error {
	var v *fsm.HostsView
	start := 0
	if t := q.page.Token; t != nil {
		if v = s.lists.at(s.state, q.rack, t.Index); v == nil {
			s.lists.pages.WithLabelValues("expired").Inc()
			return listExpired(t.Index)
		}
		s.lists.pages.WithLabelValues("next").Inc()
		start = v.After(t.After)
	} else {
		if err := s.readBarrier(c); err != nil {
			return err
		}
		if q.page.paged() {
			s.lists.pages.WithLabelValues("first").Inc()
		}
		v = s.lists.current(s.state, q.rack, q.page.paged())
		start = v.After(q.after)
	}
	if !writeHostPage(c.Response(), v, start, q) && q.page.paged() {
		s.lists.hosts.finished(viewKey{v.Index, q.rack})
	}
	return nil
}

// writeHostPage writes the List envelope of the hosts of v from start on
// that match q, up to q.page.Limit (0: all), each host encoded on its
// own by the generated appenders (hostjson.go), into one kept buffer;
// Continue is set (and more true) when a matching host is left.
func writeHostPage(w http.ResponseWriter, v *fsm.HostsView, start int, q *hostQuery) (more bool) {
	w.Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	w.WriteHeader(http.StatusOK)
	bw := getListBuffer(w)
	defer putListBuffer(bw)
	var sum wire.HostSummary
	var st wire.HostStatusSummary
	n, last := 0, ""
	io.WriteString(bw, `{"items":[`)
	for i := start; i < v.Len(); i++ {
		hv := v.At(i)
		h := &hv
		if !q.match(h) {
			continue
		}
		if q.page.Limit > 0 && n == q.page.Limit {
			more = true
			break
		}
		b := bw.item[:0]
		if n > 0 {
			b = append(b, ',')
		}
		var err error
		if q.summary {
			wire.Summarize(h, &sum, &st)
			b, err = appendHostSummaryJSON(b, &sum)
		} else {
			b, err = appendHostJSON(b, h)
		}
		if err != nil {
			return true // a host encoding/json would not write either; the page ends here
		}
		// A newline after each host, as json.Encoder wrote them.
		bw.item = append(b, '\n')
		if _, err := bw.Write(bw.item); err != nil {
			return true // the client went away mid-page; it may ask again
		}
		n++
		last = h.Name
	}
	io.WriteString(bw, `],"index":`)
	bw.WriteString(strconv.FormatUint(v.Index, 10))
	if more {
		tok := listToken{Version: listTokenVersion, Index: v.Index, After: last, Filter: q.filter()}
		bw.WriteString(`,"continue":"`)
		bw.WriteString(tok.encode())
		bw.WriteByte('"')
	}
	bw.WriteString("}\n")
	bw.Flush()
	return more
}

func (q *hostQuery) filter() string {
	view := ""
	if q.summary {
		view = wire.ViewSummary
	}
	return filterPrint(q.rack, q.pstate, q.sel.String(), view)
}
