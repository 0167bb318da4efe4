package hoststate

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoHTTPInStateMachine keeps the pure state machine pure: neither it
// nor what it imports (shared/wire above all) may pull in the HTTP or TLS
// stack. Status codes in shared/wire are plain ints; the HTTP mapping lives
// where HTTP is served.
func TestNoHTTPInStateMachine(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/rackfence/rackfence/agent/hoststate").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed only %d packages; is its output what this test expects?\n%s", len(deps), out)
	}
	for _, p := range deps {
		switch p {
		case "net/http", "crypto/tls":
			t.Errorf("agent/hoststate depends on %s: keep HTTP and TLS out of shared/wire and the state machine", p)
		}
	}
}
