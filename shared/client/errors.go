package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/rackfence/rackfence/shared/wire"
)

// ErrUnreachable is wrapped by every error returned when no coordinator
// member answered. Test with errors.Is(err, client.ErrUnreachable).
var ErrUnreachable = errors.New("cannot reach the coordinator")

// Error is an error answer of the coordinator: the HTTP status and the
// wire.ErrorBody it carried.
type Error struct {
	Status  int
	Code    string
	Message string
	// Field names the bad input field for 400 answers, when known.
	Field string
	// Method, Path and URL say which request failed (URL is the member
	// that answered, without credentials).
	Method, Path, URL string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Message)
	if e.Message == "" {
		b.WriteString(http.StatusText(e.Status))
	}
	if e.Field != "" && !strings.Contains(e.Message, e.Field) {
		fmt.Fprintf(&b, " (field %s)", e.Field)
	}
	fmt.Fprintf(&b, " [%d %s", e.Status, e.Code)
	if e.Method != "" {
		fmt.Fprintf(&b, " on %s %s", e.Method, e.Path)
	}
	b.WriteString("]")
	return b.String()
}

// Is makes errors.Is(err, wire.ErrNotFound) (any sentinel of shared/wire's
// wire-error table) true when the answer carried that code. A bare
// status without a rackfence body counts as wire.CodeForStatus(status).
func (e *Error) Is(target error) bool { return wire.MatchesCode(e.Code, target) }

func newError(resp *http.Response, body []byte, base *url.URL, r request) *Error {
	e := &Error{Status: resp.StatusCode, Method: r.method, Path: r.path, URL: base.Redacted()}
	var eb wire.ErrorBody
	if json.Unmarshal(body, &eb) == nil && (eb.Error.Code != "" || eb.Error.Message != "") {
		e.Code, e.Message, e.Field = eb.Error.Code, eb.Error.Message, eb.Error.Field
		return e
	}
	// Not a rackfence error body (a proxy, another server): keep a short,
	// single-line excerpt.
	e.Code = wire.CodeForStatus(resp.StatusCode)
	if resp.StatusCode == http.StatusBadRequest && strings.Contains(string(body), "HTTP request to an HTTPS server") {
		e.Message = "the coordinator at " + base.Host + " serves HTTPS (TLS is the default): use https://" + base.Host
		return e
	}
	msg := strings.Join(strings.Fields(string(body)), " ")
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	e.Message = msg
	return e
}

// UnreachableError says no member answered: which URLs were tried and the
// last connection error. It matches ErrUnreachable with errors.Is.
type UnreachableError struct {
	URLs []string
	Err  error
}

func (e *UnreachableError) Error() string {
	s := fmt.Sprintf("cannot reach the coordinator at %s", strings.Join(e.URLs, ", "))
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is makes errors.Is(err, ErrUnreachable) true.
func (e *UnreachableError) Is(target error) bool { return target == ErrUnreachable }

// Unwrap returns the last connection error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// AsError returns the *Error inside err, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

func hasStatus(err error, status int) bool {
	e, ok := AsError(err)
	return ok && e.Status == status
}

// IsNotFound reports a 404 answer.
func IsNotFound(err error) bool { return hasStatus(err, http.StatusNotFound) }

// IsConflict reports a 409 answer (a conflict or a stale epoch).
func IsConflict(err error) bool { return hasStatus(err, http.StatusConflict) }

// IsStaleEpoch reports a 409 answer with code stale_epoch: the caller's
// lease epoch is no longer current and it must stop acting for the rack.
func IsStaleEpoch(err error) bool {
	e, ok := AsError(err)
	return ok && e.Status == http.StatusConflict && e.Code == wire.CodeStaleEpoch
}

// IsUnauthorized reports a 401 answer (no token or an unknown one).
func IsUnauthorized(err error) bool { return hasStatus(err, http.StatusUnauthorized) }

// IsForbidden reports a 403 answer (the token's role or rack does not allow it).
func IsForbidden(err error) bool { return hasStatus(err, http.StatusForbidden) }

// IsNoLeader reports a 503 answer that outlived the client's retries.
func IsNoLeader(err error) bool { return hasStatus(err, http.StatusServiceUnavailable) }

// IsUnreachable reports that no coordinator member answered.
func IsUnreachable(err error) bool { return errors.Is(err, ErrUnreachable) }
