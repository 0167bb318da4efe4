package api

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/internal/jsonl"
	"github.com/rackfence/rackfence/shared/wire"
)

// GET /v1/audit pages backwards through this member's trail: the first
// page is the newest limit records, each continue token the records
// before the last page's (every page oldest first). A token names the
// member that answered and a place in one of its files (jsonl.Pos), not a
// Raft index: the trail is the member's own file, not replicated state.
// Records appended after the first page are not in later pages, so a
// list read page by page is the trail as it was at its first page. A
// token from another member, or into a file a rotation dropped, is
// list_expired (410).

type auditToken struct {
	Version int       `json:"v"`
	Kind    string    `json:"k"`
	Member  string    `json:"m"`
	Pos     jsonl.Pos `json:"p"`
}

const (
	auditTokenVersion = 1
	auditTokenKind    = "audit"
)

func (t auditToken) encode() string {
	b, _ := json.Marshal(t)
	return base64.RawURLEncoding.EncodeToString(b)
}

type auditPage struct {
	limit int
	from  jsonl.Pos
}

// parseAuditPage reads limit (default DefaultAuditLimit) and continue.
func (s *Server) parseAuditPage(c echo.Context) (auditPage, error) {
	p := auditPage{limit: DefaultAuditLimit}
	if v := c.QueryParam(wire.ParamLimit); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxAuditLimit {
			return p, badField(wire.ParamLimit, "%q is not a page size of the audit trail: use a number from 1 to %d (default %d)", v, MaxAuditLimit, DefaultAuditLimit)
		}
		p.limit = n
	}
	v := c.QueryParam(wire.ParamContinue)
	if v == "" {
		return p, nil
	}
	var t auditToken
	raw, err := base64.RawURLEncoding.DecodeString(v)
	if err == nil {
		err = json.Unmarshal(raw, &t)
	}
	if err != nil || t.Version != auditTokenVersion || t.Kind != auditTokenKind || t.Pos.IsZero() || t.Pos.Off < 0 {
		return p, badField(wire.ParamContinue, "not a continue token of the audit trail: pass the previous page's continue unchanged, or leave continue out to start at the newest records")
	}
	if me := s.store.NodeID(); t.Member != me {
		s.lists.pages.WithLabelValues("expired").Inc()
		run := "rackfencectl audit --coordinator URL (" + t.Member + "'s URL: rackfencectl cluster members)"
		if u := s.memberURL(t.Member); u != "" {
			run = "rackfencectl audit --coordinator " + u
		}
		return p, errf(http.StatusGone, wire.CodeListExpired,
			"this continue token pages through member %s's audit trail and member %s answered: each member keeps its own trail, so ask %s for the next page (%s), or start again without continue",
			t.Member, me, t.Member, run)
	}
	p.from = t.Pos
	return p, nil
}

// auditExpired is the answer to a token into a file rotated away: every
// record older than the pages already read went with it.
func auditExpired(maxBytes int64) *apiError {
	return errf(http.StatusGone, wire.CodeListExpired,
		"the audit records this continue token points to were rotated away while the trail was read (a member keeps its audit.log and one audit.log.1, each up to %d bytes): this member keeps no record older than the pages already read; to read what it keeps now, newest first, start again without continue (rackfencectl audit --limit 0)",
		maxBytes)
}

// memberURL is member id's API URL ("" when this member does not know it).
func (s *Server) memberURL(id string) string {
	ms, err := s.store.Members()
	if err != nil {
		return ""
	}
	for _, m := range ms {
		if m.ID == id {
			return m.HTTPAddr
		}
	}
	return ""
}
