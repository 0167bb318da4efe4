package api

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// after on the paged lists other than hosts. A list whose items are
// sorted by a key that new items only take at its end, or anywhere with a
// key of their own, goes on exactly after the last item read: the
// credentials (by name), the tokens (by creation time, then id: a new
// token is created now) and a rack's lease history (by epoch, which only
// grows). A host's events take no after: a host keeps its last
// fsm.MaxEvents, which one request reads (wire.DefaultPageSize), and
// events of one Raft entry share their index.

// parseListAfter reads after for a list that takes it (parse, nil: one
// that does not), not with continue.
func parseListAfter[T any](c echo.Context, page pageReq, parse func(string) (func(*T) bool, error)) (func(*T) bool, error) {
	v, ok := c.QueryParams()[wire.ParamAfter]
	if !ok {
		return nil, nil
	}
	if parse == nil {
		return nil, badField(wire.ParamAfter, "this list does not take after: leave it out, and read the list from its start (it is at most %d items, one request with the default limit)", fsm.MaxEvents)
	}
	if len(v) != 1 {
		return nil, badField(wire.ParamAfter, "after is given %d times: give one, the last item already read", len(v))
	}
	if page.Token != nil {
		return nil, badField(wire.ParamAfter, "after and continue conflict: go on with continue alone, or start a new list after an item with after alone")
	}
	return parse(v[0])
}

// afterName: credentials records named after v.
func afterName(v string) (func(*wire.Credentials) bool, error) {
	if err := wire.ValidateName(wire.ParamAfter, v); err != nil {
		return nil, badField(wire.ParamAfter, "%v: give the name of the last record already read (the list starts with the first record named after it)", err)
	}
	return func(c *wire.Credentials) bool { return c.Name > v }, nil
}

// afterToken: tokens after v (wire.TokenAfter of the last token read:
// "CREATED,ID"), in the list's order.
func afterToken(v string) (func(*wire.Token) bool, error) {
	at, id, ok := strings.Cut(v, ",")
	t, err := time.Parse(time.RFC3339Nano, at)
	if !ok || err != nil || len(id) != fsm.TokenIDLen || !isLowerHex(id) {
		return nil, badField(wire.ParamAfter, "%q is not a token of the list: give the last token read as CREATED,ID (its createdAt as RFC 3339, e.g. 2026-11-28T20:00:00.123456789Z, a comma, its %d-digit id)", v, fsm.TokenIDLen)
	}
	return func(k *wire.Token) bool {
		if !k.CreatedAt.Equal(t) {
			return k.CreatedAt.After(t)
		}
		return k.ID > id
	}, nil
}

// afterEpoch: lease records of later epochs than v.
func afterEpoch(v string) (func(*wire.LeaseRecord) bool, error) {
	e, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return nil, badField(wire.ParamAfter, "%q is not an epoch: give the epoch of the last lease record read (a whole number)", v)
	}
	return func(r *wire.LeaseRecord) bool { return r.Epoch > e }, nil
}

// listExpiredDo is list_expired for a list other than hosts, with what
// to do (do: the command that reads it again, or how it goes on).
func listExpiredDo(index uint64, do string) *apiError {
	return errf(http.StatusGone, wire.CodeListExpired,
		"this member no longer keeps the list at index %d (a list's pages are answered up to %s after its first page, %s after its last page, at most %d lists, and only by the member that answered the first page): %s",
		index, ListViewMaxAge, ListViewLinger, MaxListViews, do)
}
