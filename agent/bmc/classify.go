package bmc

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rackfence/rackfence/agent/errclass"
)

// classify turns a gofish (Redfish) or bmclib (IPMI) error into one wrapping
// exactly one error class. For Redfish it trusts what the transport saw on
// the wire; for IPMI (and for failures with no HTTP answer) it reads
// ipmitool's and bmclib's text. The password never appears: neither library
// puts it in errors (gofish's login body is never echoed), ipmitool
// gets it through the environment, and scrub removes it defensively.
func (c *Conn) classify(ctx context.Context, op string, err error, seen observed) error {
	if err == nil {
		return nil
	}
	msg := c.scrub(err.Error())
	where := fmt.Sprintf("bmc %s on %s (%s)", op, c.addr, c.proto)
	low := strings.ToLower(msg)
	switch {
	case seen.authFailed:
		return fmt.Errorf("%w: %s: the BMC answered %d: check the host's credentials record (%s)", errclass.ErrAuth, where, seen.lastStatus, msg)
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		return fmt.Errorf("%w: %s: no answer within the call's deadline (%v); the BMC may be down or overloaded, retry later", errclass.ErrTransient, where, ctx.Err())
	case seen.lastStatus >= 500 && seen.lastStatus != 501:
		return fmt.Errorf("%w: %s: the BMC answered %d; retry later (%s)", errclass.ErrTransient, where, seen.lastStatus, msg)
	case seen.lastStatus == 404 || seen.lastStatus == 405 || seen.lastStatus == 501:
		return fmt.Errorf("%w: %s: the BMC answered %d: it does not offer this (%s)", errclass.ErrUnsupported, where, seen.lastStatus, msg)
	case seen.lastStatus >= 400:
		return fmt.Errorf("%w: %s: the BMC refused the operation with %d (%s)", errclass.ErrFailed, where, seen.lastStatus, msg)
	case seen.netErr != nil:
		return fmt.Errorf("%w: %s: cannot reach the BMC: %s; check the address and network, retry later", errclass.ErrTransient, where, msg)
	}
	// No HTTP evidence: IPMI, or a failure bmclib detected itself.
	if c.proto == "ipmi" && strings.Contains(low, "unable to establish") && c.ipmiDiagnose(ctx) {
		return fmt.Errorf("%w: %s: the BMC refused the user or password: check the host's credentials record (%s)", errclass.ErrAuth, where, msg)
	}
	switch {
	case containsAny(low, "rakp", "unauthorized name", "insufficient privilege", "invalid user name", "authentication"):
		return fmt.Errorf("%w: %s: the BMC refused the credentials: check the host's credentials record (%s)", errclass.ErrAuth, where, msg)
	case containsAny(low, "not supported", "not implemented", "no provider", "invalid media type", "unsupported", "invalid command"):
		return fmt.Errorf("%w: %s: %s", errclass.ErrUnsupported, where, msg)
	case containsAny(low, "unable to establish", "connection refused", "timeout", "timed out", "no route", "i/o timeout", "no such host", "eof", "connection reset"):
		return fmt.Errorf("%w: %s: cannot reach the BMC: %s; check the address and network, retry later", errclass.ErrTransient, where, msg)
	}
	return fmt.Errorf("%w: %s: %s", errclass.ErrFailed, where, msg)
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// scrub removes the password from a message, in case anything echoed it.
func (c *Conn) scrub(s string) string {
	if len(c.target.Password) >= 3 {
		s = strings.ReplaceAll(s, c.target.Password, "<redacted>")
	}
	// bmclib joins provider errors over several lines; keep one line.
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 400 {
		s = s[:397] + "..."
	}
	return s
}
