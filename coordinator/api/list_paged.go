package api

import (
	"net/http"
	"sort"
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
// ListViewMaxAge, ListViewLinger, MaxListViews. A list sorted by a key
// that only grows where it is read on (list_after.go) also takes after:
// a list that outlived its view goes on after the last item read.

type itemKey struct {
	kind, key string
	index     uint64
}

// pagedList is one of those lists as a request asks for it.
type pagedList[T any] struct {
	kind string
	// key: the host or rack the list is of ("" for none).
	key string
	// snap gives the list now, sorted, and its index; it is called for a
	// list's first page only, or for a later one when this member still
	// is at the list's index.
	snap func() ([]T, uint64, error)
	// after parses the after parameter into "this item comes after it"
	// (list_after.go); nil: the list takes no after.
	after func(v string) (func(*T) bool, error)
	// again says what to run when the list expired (listExpiredDo).
	again string
}

// servePaged answers l: the whole list in one answer without limit and
// continue (as before paging), else one page of it.
func servePaged[T any](s *Server, c echo.Context, l pagedList[T]) error {
	page, err := parsePage(c, filterPrint(l.kind, l.key))
	if err != nil {
		return err
	}
	past, err := parseListAfter(c, page, l.after)
	if err != nil {
		return err
	}
	from := func(items []T) int {
		if past == nil {
			return 0
		}
		return sort.Search(len(items), func(i int) bool { return past(&items[i]) })
	}
	if !page.paged() {
		items, idx, err := l.snap()
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, wire.List[T]{Items: items[from(items):], Index: idx})
	}
	views := s.lists.items
	var items []T
	var idx uint64
	start := 0
	if t := page.Token; t != nil {
		idx = t.Index
		k := itemKey{l.kind, l.key, idx}
		v, _ := views.get(k)
		if kept, ok := v.([]T); ok {
			items = kept
		} else if cur, at, err := l.snap(); err == nil && at == idx {
			items = cur
			views.put(k, items)
		} else {
			s.lists.pages.WithLabelValues("expired").Inc()
			return listExpiredDo(idx, l.again)
		}
		s.lists.pages.WithLabelValues("next").Inc()
		n, err := strconv.Atoi(t.After)
		if err != nil || n < 0 {
			return badField(wire.ParamContinue, "not a continue token of this list: pass the previous page's continue unchanged, or leave continue out to start the list")
		}
		start = min(n+1, len(items))
	} else {
		s.lists.pages.WithLabelValues("first").Inc()
		if items, idx, err = l.snap(); err != nil {
			return err
		}
		views.put(itemKey{l.kind, l.key, idx}, items)
		start = from(items)
	}
	end := min(start+page.Limit, len(items))
	out := wire.List[T]{Items: items[start:end], Index: idx}
	if out.Items == nil {
		out.Items = []T{}
	}
	if end < len(items) {
		out.Continue = listToken{Version: listTokenVersion, Index: idx, After: strconv.Itoa(end - 1), Filter: filterPrint(l.kind, l.key)}.encode()
	} else {
		views.finished(itemKey{l.kind, l.key, idx})
	}
	return c.JSON(http.StatusOK, out)
}
