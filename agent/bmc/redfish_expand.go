package bmc

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/stmcginnis/gofish/common"
)

// $expand: a service advertising "." expansion (ProtocolFeaturesSupported.
// ExpandQuery.NoLinks) answers the system with its subordinate resources
// inline, so inventory reads the system, its collections, their members and
// the drives in one GET (with $levels=3; 15 GETs per host on the
// simulator's default shape before). Whatever the answer does not carry
// inline (fewer levels, a service ignoring the query) is read link by link
// as before: rfMember and rfNavCollection hold either.

// expandLevels is what inventory needs: the system's collections (1), their
// members (2), a storage's drives (3).
const expandLevels = 3

// expandRefused: the service answered the $expand query 400, 404 (some
// firmware treats the query as part of the path) or 501: read link by link
// from now on.
func expandRefused(err error) bool {
	var ge *common.Error
	if !errors.As(err, &ge) {
		return false
	}
	switch ge.HTTPReturnedStatusCode {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusNotImplemented:
		return true
	}
	return false
}

// rfMember is a link that may carry its document inline (an expanded
// answer: it has @odata.type or Id besides @odata.id).
type rfMember struct {
	ID  string
	raw []byte // the inline document; nil for a bare link
}

func (m *rfMember) UnmarshalJSON(b []byte) error {
	var l struct {
		ID   string `json:"@odata.id"`
		Type string `json:"@odata.type"`
		Id   string //nolint:revive // the Redfish property
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	m.ID, m.raw = l.ID, nil
	if l.Type != "" || l.Id != "" {
		m.raw = bytes.Clone(b)
	}
	return nil
}

// rfNavCollection is a link to a collection; Members is set when the
// answer carried the collection inline.
type rfNavCollection struct {
	ID      string      `json:"@odata.id"`
	Members *[]rfMember `json:"Members"`
}

// rfMemberCollection is a collection read on its own.
type rfMemberCollection struct{ Members []rfMember }
