package wire

// Error codes of ErrorDetail.Code. The wire-error table below (WireErrors)
// gives each its HTTP status; coordinator/api answers with it and
// shared/client reads it back, so neither side keeps its own copy.
// openapi.yaml's ErrorDetail.code enum lists the same codes
// (TestWireErrorsMatchOpenAPI).
const (
	// CodeBadRequest (400): bad input; ErrorDetail.Field names the field.
	CodeBadRequest = "bad_request"
	// CodeUnauthorized (401): no bearer token, or an unknown, revoked or
	// expired one.
	CodeUnauthorized = "unauthorized"
	// CodeForbidden (403): the token's role (or rack) may not do this.
	CodeForbidden = "forbidden"
	// CodeNotFound (404): no such object, or no such endpoint.
	CodeNotFound = "not_found"
	// CodeConflict (409): refused by the current state.
	CodeConflict = "conflict"
	// CodeStaleEpoch (409): the caller's lease epoch is no longer current;
	// it must stop acting for the rack.
	CodeStaleEpoch = "stale_epoch"
	// CodeTooLarge (413): the request body is larger than 1 MiB.
	CodeTooLarge = "too_large"
	// CodeTooManyRequests (429): too many failed authentications from the
	// caller's address; wait for Retry-After.
	CodeTooManyRequests = "too_many_requests"
	// CodeInternal (500): an unexpected failure; the member's log has the
	// details. Also carried by a 504 "may have been applied" and a 503
	// from a member without its audit trail.
	CodeInternal = "internal"
	// CodeNoLeader (503): no leader, or it could not be reached; retry
	// after Retry-After (on another member first).
	CodeNoLeader = "no_leader"
	// CodeSecretsKeyMissing (503): the answering member lacks the secrets
	// key needed to seal or reveal a password: the message names the key
	// ID and the key file to add it to. 503 like no_leader: another member
	// (or this one after SIGHUP) may answer.
	CodeSecretsKeyMissing = "secrets_key_missing"
	// CodeUpgradeRequired (503): the write needs a command type or body
	// version a cluster member's binary does not apply yet: the message
	// names the members to upgrade. Retry-After says when to try again.
	CodeUpgradeRequired = "upgrade_required"
	// CodeMemberStopped (503): the answering member stopped applying the
	// Raft log at an entry its binary does not know: the message names
	// it. Ask another member; upgrade this one.
	CodeMemberStopped = "member_stopped"
	// CodeBMCTaskRunning (409): a BMC task (firmware, bios, raid, erase)
	// runs on the host's BMC (Host.Task) and the request could interrupt
	// it; the message names the task's kind and component. Wait for it to
	// end, or repeat with force where the request has one.
	CodeBMCTaskRunning = "bmc_task_running"
	// CodeListExpired (410): a list's continue token names a Raft index
	// whose view of the list this member no longer keeps (it expired,
	// was evicted, or another member answered): start the list again
	// without continue.
	CodeListExpired = "list_expired"
)

// WireError is one row of the wire-error table: an error code and the
// HTTP status it is answered with. The rows are also sentinels: a
// client.Error or a fsm.Error carrying code C matches the row of
// C with errors.Is (errors.Is(err, wire.ErrNotFound)), whichever layer
// produced it.
//
// Status is a plain int: this package imports no net/http, so the pure
// state machine (agent/hoststate) that uses these types builds without the
// HTTP stack (TestNoHTTPInStateMachine). The HTTP mapping lives where HTTP
// is served (coordinator/api) and read (shared/client).
type WireError struct {
	Code   string
	Status int
}

func (e *WireError) Error() string { return e.Code + " (" + statusText[e.Status] + ")" }

// The HTTP statuses of the table, and their reason phrases (RFC 9110), as
// Error prints them.
const (
	statusBadRequest          = 400
	statusUnauthorized        = 401
	statusForbidden           = 403
	statusNotFound            = 404
	statusConflict            = 409
	statusGone                = 410
	statusTooLarge            = 413
	statusTooManyRequests     = 429
	statusInternalServerError = 500
	statusServiceUnavailable  = 503
)

var statusText = map[int]string{
	statusBadRequest:          "Bad Request",
	statusUnauthorized:        "Unauthorized",
	statusForbidden:           "Forbidden",
	statusNotFound:            "Not Found",
	statusConflict:            "Conflict",
	statusGone:                "Gone",
	statusTooLarge:            "Request Entity Too Large",
	statusTooManyRequests:     "Too Many Requests",
	statusInternalServerError: "Internal Server Error",
	statusServiceUnavailable:  "Service Unavailable",
}

// The wire-error table, one sentinel per code (see the Code* constants for
// what each means).
var (
	ErrBadRequest        = &WireError{CodeBadRequest, statusBadRequest}
	ErrUnauthorized      = &WireError{CodeUnauthorized, statusUnauthorized}
	ErrForbidden         = &WireError{CodeForbidden, statusForbidden}
	ErrNotFound          = &WireError{CodeNotFound, statusNotFound}
	ErrConflict          = &WireError{CodeConflict, statusConflict}
	ErrStaleEpoch        = &WireError{CodeStaleEpoch, statusConflict}
	ErrTooLarge          = &WireError{CodeTooLarge, statusTooLarge}
	ErrTooManyRequests   = &WireError{CodeTooManyRequests, statusTooManyRequests}
	ErrInternal          = &WireError{CodeInternal, statusInternalServerError}
	ErrNoLeader          = &WireError{CodeNoLeader, statusServiceUnavailable}
	ErrSecretsKeyMissing = &WireError{CodeSecretsKeyMissing, statusServiceUnavailable}
	ErrUpgradeRequired   = &WireError{CodeUpgradeRequired, statusServiceUnavailable}
	ErrMemberStopped     = &WireError{CodeMemberStopped, statusServiceUnavailable}
	ErrBMCTaskRunning    = &WireError{CodeBMCTaskRunning, statusConflict}
	ErrListExpired       = &WireError{CodeListExpired, statusGone}
)

// WireErrors is the whole table. Where codes share a status, the first
// listed is the one a bare status maps back to (CodeForStatus):
// conflict before stale_epoch, no_leader before secrets_key_missing.
var WireErrors = []*WireError{
	ErrBadRequest, ErrUnauthorized, ErrForbidden, ErrNotFound,
	ErrConflict, ErrStaleEpoch, ErrTooLarge, ErrTooManyRequests,
	ErrInternal, ErrNoLeader, ErrSecretsKeyMissing,
	ErrUpgradeRequired, ErrMemberStopped, ErrBMCTaskRunning, ErrListExpired,
}

var (
	byCode   = map[string]*WireError{}
	byStatus = map[int]*WireError{}
)

func init() {
	for _, e := range WireErrors {
		byCode[e.Code] = e
		if _, ok := byStatus[e.Status]; !ok {
			byStatus[e.Status] = e
		}
	}
}

// StatusForCode is the HTTP status code is answered with; 500 for a code
// the table does not know.
func StatusForCode(code string) int {
	if e := byCode[code]; e != nil {
		return e.Status
	}
	return statusInternalServerError
}

// CodeForStatus is the code a bare HTTP status stands for (an answer
// without a rackfence error body, e.g. from a proxy): the first row of
// the table with that status, CodeInternal for any other status.
func CodeForStatus(status int) string {
	if e := byStatus[status]; e != nil {
		return e.Code
	}
	return CodeInternal
}

// MatchesCode is the Is method of an error carrying a wire code: it
// reports whether target is the table's sentinel for code. Error types of
// other layers (client.Error, fsm.Error) call it from their own
// Is method.
func MatchesCode(code string, target error) bool {
	w, ok := target.(*WireError)
	return ok && w.Code == code
}
