package client

import "net/http"

// IsBadRequest reports a 400 answer (bad input; Error.Field names the field).
func IsBadRequest(err error) bool { return hasStatus(err, http.StatusBadRequest) }

// MaxListViewsForTest is how many host-list views a coordinator keeps
// (coordinator/api.MaxListViews): that many newer lists evict the oldest.
const MaxListViewsForTest = 16
