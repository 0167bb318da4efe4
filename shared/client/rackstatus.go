package client

import (
	"context"
	"errors"
	"net/http"

	"github.com/rackfence/rackfence/shared/wire"
)

// ReportRackStatus writes an agent's status report for many hosts of its
// rack in one request: POST /v1/racks/{rack}/status. A stale epoch refuses
// the whole report (IsStaleEpoch); a host refused on its own carries an
// error in its result. A coordinator that predates the endpoint answers
// IsRackStatusUnsupported: write each host with ReportStatus instead.
func (c *Client) ReportRackStatus(ctx context.Context, rack string, r wire.RackStatusReport) (*wire.RackStatusResult, error) {
	var out wire.RackStatusResult
	if _, err := c.call(ctx, http.MethodPost, "/v1/racks/"+seg(rack)+"/status", nil, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// IsRackStatusUnsupported reports an answer to ReportRackStatus from a
// coordinator without the endpoint: 404 or 405 (an older binary), or 503
// upgrade_required (a cluster whose members do not all apply it).
func IsRackStatusUnsupported(err error) bool {
	return IsNotFound(err) || hasStatus(err, http.StatusMethodNotAllowed) || errors.Is(err, wire.ErrUpgradeRequired)
}

// HostError is the error of one host refused in a rack status answer, as
// ReportStatus would have returned it for that host alone (IsNotFound,
// IsConflict and IsForbidden read it).
func HostError(rack string, r wire.RackHostResult) *Error {
	if r.Error == nil {
		return nil
	}
	return &Error{Status: wire.StatusForCode(r.Error.Code), Code: r.Error.Code, Message: r.Error.Message, Field: r.Error.Field,
		Method: http.MethodPost, Path: "/v1/racks/" + seg(rack) + "/status"}
}
