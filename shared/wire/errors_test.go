package wire

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
)

// TestWireErrorTable pins every code and status as they are on the wire
// (docs/api.md, openapi.yaml): changing one is a contract change, not a
// refactoring.
func TestWireErrorTable(t *testing.T) {
	want := map[string]int{
		"bad_request":         400,
		"unauthorized":        401,
		"forbidden":           403,
		"not_found":           404,
		"conflict":            409,
		"stale_epoch":         409,
		"too_large":           413,
		"too_many_requests":   429,
		"internal":            500,
		"no_leader":           503,
		"secrets_key_missing": 503,
		"upgrade_required":    503,
		"member_stopped":      503,
		"bmc_task_running":    409,
		"list_expired":        410,
	}
	if len(WireErrors) != len(want) {
		t.Errorf("the table has %d rows, want %d", len(WireErrors), len(want))
	}
	seen := map[string]bool{}
	for _, e := range WireErrors {
		if seen[e.Code] {
			t.Errorf("code %s is listed twice", e.Code)
		}
		seen[e.Code] = true
		if st, ok := want[e.Code]; !ok || st != e.Status {
			t.Errorf("row %s → %d, want %d (known: %v)", e.Code, e.Status, st, ok)
		}
		if got := StatusForCode(e.Code); got != e.Status {
			t.Errorf("StatusForCode(%s) = %d, want %d", e.Code, got, e.Status)
		}
		if WireErrorFor(e.Code) != e {
			t.Errorf("WireErrorFor(%s) is not the row", e.Code)
		}
	}
	if got := StatusForCode("no_such_code"); got != http.StatusInternalServerError {
		t.Errorf("StatusForCode(unknown) = %d, want 500", got)
	}
	if WireErrorFor("no_such_code") != nil {
		t.Error("WireErrorFor(unknown) is not nil")
	}
}

// TestWireErrorRoundTrip: status → code → status holds for every status
// of the table, and code → status → code wherever a status has one code;
// where two codes share a status the first row is the one read back.
func TestWireErrorRoundTrip(t *testing.T) {
	codesOf := map[int][]string{}
	for _, e := range WireErrors {
		codesOf[e.Status] = append(codesOf[e.Status], e.Code)
	}
	for st, codes := range codesOf {
		c := CodeForStatus(st)
		if got := StatusForCode(c); got != st {
			t.Errorf("status %d → code %s → status %d", st, c, got)
		}
		if c != codes[0] {
			t.Errorf("CodeForStatus(%d) = %s, want the first row %s", st, c, codes[0])
		}
		if len(codes) == 1 {
			if back := CodeForStatus(StatusForCode(codes[0])); back != codes[0] {
				t.Errorf("code %s → status %d → code %s", codes[0], st, back)
			}
		}
	}
	if got := CodeForStatus(http.StatusConflict); got != CodeConflict {
		t.Errorf("CodeForStatus(409) = %s, want conflict (not stale_epoch)", got)
	}
	if got := CodeForStatus(http.StatusServiceUnavailable); got != CodeNoLeader {
		t.Errorf("CodeForStatus(503) = %s, want no_leader", got)
	}
	for _, st := range []int{http.StatusBadGateway, http.StatusGatewayTimeout, http.StatusTeapot} {
		if got := CodeForStatus(st); got != CodeInternal {
			t.Errorf("CodeForStatus(%d) = %s, want internal", st, got)
		}
	}
}

// codeErr is an error of another layer carrying a wire code, as
// client.Error and fsm.Error do.
type codeErr struct{ code string }

func (e *codeErr) Error() string        { return e.code }
func (e *codeErr) Is(target error) bool { return MatchesCode(e.code, target) }

func TestMatchesCode(t *testing.T) {
	err := fmt.Errorf("get host: %w", &codeErr{CodeStaleEpoch})
	if !errors.Is(err, ErrStaleEpoch) {
		t.Error("a wrapped stale_epoch error does not match ErrStaleEpoch")
	}
	if errors.Is(err, ErrConflict) {
		t.Error("a stale_epoch error matches ErrConflict: codes, not statuses, are compared")
	}
	if errors.Is(err, errors.New(CodeStaleEpoch)) {
		t.Error("an error that is not a table row matched")
	}
}

// TestWireErrorStatusText: the reason phrase Error prints for each row is
// net/http's (the package keeps its own copy so it need not import the
// HTTP stack).
func TestWireErrorStatusText(t *testing.T) {
	for _, e := range WireErrors {
		want := e.Code + " (" + http.StatusText(e.Status) + ")"
		if got := e.Error(); got != want {
			t.Errorf("%s: Error() = %q, want %q", e.Code, got, want)
		}
	}
}
