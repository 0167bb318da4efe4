package api

import (
	"encoding/base64"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/shared/wire"
)

// pageReq is a list request's paging: Limit 0 with no token is the whole
// list in one answer (clients that predate paging).
type pageReq struct {
	Limit int
	Token *listToken
}

func (p pageReq) paged() bool { return p.Limit > 0 || p.Token != nil }

// listToken is what a continue token carries: the index of the list's
// first page, the last name answered, and a fingerprint of the list's
// filters (a token is only good for the list it came from).
type listToken struct {
	Version int    `json:"v"`
	Index   uint64 `json:"i"`
	After   string `json:"a"`
	Filter  string `json:"f"`
}

const listTokenVersion = 1

func (t listToken) encode() string {
	b, _ := json.Marshal(t)
	return base64.RawURLEncoding.EncodeToString(b)
}

// filterPrint fingerprints a list's filters for its continue tokens.
func filterPrint(parts ...string) string {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return strconv.FormatUint(h.Sum64(), 36)
}

// parsePage reads limit and continue; filter is the list's filterPrint.
func parsePage(c echo.Context, filter string) (pageReq, error) {
	var p pageReq
	if v := c.QueryParam(wire.ParamLimit); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > wire.MaxPageSize {
			return p, badField(wire.ParamLimit, "%q is not a page size: use a number from 1 to %d (default %d with continue)", v, wire.MaxPageSize, wire.DefaultPageSize)
		}
		p.Limit = n
	}
	v := c.QueryParam(wire.ParamContinue)
	if v == "" {
		return p, nil
	}
	var t listToken
	raw, err := base64.RawURLEncoding.DecodeString(v)
	if err == nil {
		err = json.Unmarshal(raw, &t)
	}
	if err != nil || t.Version != listTokenVersion || t.Index == 0 {
		return p, badField(wire.ParamContinue, "not a continue token: pass the previous page's continue unchanged, or leave continue out to start the list")
	}
	if t.Filter != filter {
		return p, badField(wire.ParamContinue, "the token belongs to a list with other filters: ask every page with the first page's rack, state, selector and view, or start the list again without continue")
	}
	p.Token = &t
	if p.Limit == 0 {
		p.Limit = wire.DefaultPageSize
	}
	return p, nil
}

func listExpired(index uint64) *apiError {
	return errf(http.StatusGone, wire.CodeListExpired,
		"this member no longer keeps the list at index %d (a list's pages are answered up to %s after its first page, %s after its last page, at most %d lists, and only by the member that answered the first page): start the list again without continue",
		index, ListViewMaxAge, ListViewLinger, MaxListViews)
}
