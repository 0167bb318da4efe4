package api

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/shared/wire"
)

// The lists other than hosts that can be long (a host's events, the
// credentials, the tokens, a rack's lease history) page the way the host
// list does: limit and continue, every page of a list at its first page's
// index, the same token format (the position of the last item answered in
// place of a host name) and list_expired (410) when this member no longer
// keeps the list. The first page's items are kept (a copy, already made
// by the FSM's answer) under the same bounds as host-list views:
// ListViewMaxAge, ListViewLinger, MaxListViews.

type itemKey struct {
	kind, key string
	index     uint64
}

// servePaged answers a list of kind (key: the host or rack it is of, ""
// for none): the whole list in one answer without limit and continue
// (as before paging), else one page of it. snap gives the list now and
// its index; it is called for a list's first page only, or for a later
// one when this member still is at the list's index.
func servePaged[T any](s *Server, c echo.Context, kind, key string, snap func() ([]T, uint64, error)) error {
	page, err := parsePage(c, filterPrint(kind, key))
	if err != nil {
		return err
	}
	if !page.paged() {
		items, idx, err := snap()
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, wire.List[T]{Items: items, Index: idx})
	}
	views := s.lists.items
	var items []T
	var idx uint64
	start := 0
	if t := page.Token; t != nil {
		idx = t.Index
		k := itemKey{kind, key, idx}
		v, _ := views.get(k)
		if kept, ok := v.([]T); ok {
			items = kept
		} else if cur, at, err := snap(); err == nil && at == idx {
			items = cur
			views.put(k, items)
		} else {
			s.lists.pages.WithLabelValues("expired").Inc()
			return listExpired(idx)
		}
		s.lists.pages.WithLabelValues("next").Inc()
		n, err := strconv.Atoi(t.After)
		if err != nil || n < 0 {
			return badField(wire.ParamContinue, "not a continue token of this list: pass the previous page's continue unchanged, or leave continue out to start the list")
		}
		start = min(n+1, len(items))
	} else {
		s.lists.pages.WithLabelValues("first").Inc()
		if items, idx, err = snap(); err != nil {
			return err
		}
		views.put(itemKey{kind, key, idx}, items)
	}
	end := min(start+page.Limit, len(items))
	out := wire.List[T]{Items: items[start:end], Index: idx}
	if out.Items == nil {
		out.Items = []T{}
	}
	if end < len(items) {
		out.Continue = listToken{Version: listTokenVersion, Index: idx, After: strconv.Itoa(end - 1), Filter: filterPrint(kind, key)}.encode()
	} else {
		views.finished(itemKey{kind, key, idx})
	}
	return c.JSON(http.StatusOK, out)
}
