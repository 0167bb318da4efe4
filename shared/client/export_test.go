package client

import "net/http"

// IsBadRequest reports a 400 answer (bad input; Error.Field names the field).
func IsBadRequest(err error) bool { return hasStatus(err, http.StatusBadRequest) }
