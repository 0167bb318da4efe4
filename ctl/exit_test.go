package ctl

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rackfence/rackfence/shared/client"
)

// A 429 (too many failed authentications) is an operation failure with a
// hint about the token; the coordinator side is tested in coordinator/api.
func TestRateLimitedHint(t *testing.T) {
	x := &Ctx{}
	code, hints := x.classify(fmt.Errorf("wrapped: %w", &client.Error{Status: 429, Code: "too_many_requests", Message: "too many failed authentications"}))
	if code != ExitFailed || len(hints) != 1 || !strings.Contains(hints[0], "--token-file") {
		t.Fatalf("429: exit %d, hints %q", code, hints)
	}
}

// A 503 upgrade_required or member_stopped is not "no leader": the hint
// says what to upgrade or where to go instead.
func TestUpgradeHints(t *testing.T) {
	x := &Ctx{}
	for code, want := range map[string]string{"upgrade_required": "upgrade the members", "member_stopped": "another member", "no_leader": "no leader"} {
		c, hints := x.classify(&client.Error{Status: 503, Code: code, Message: "m"})
		if c != ExitFailed || len(hints) != 1 || !strings.Contains(hints[0], want) {
			t.Errorf("%s: exit %d, hints %q", code, c, hints)
		}
	}
}
