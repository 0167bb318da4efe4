package ironic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/rackfence/rackfence/agent/errclass"
	"github.com/rackfence/rackfence/agent/guard"
)

// Errors of this package. Each wraps one of provisioner's error classes, so
// errors.Is(err, errclass.ErrFailed) and errors.Is(err, ErrMicroversion)
// both work.
var (
	// ErrMicroversion: Ironic does not serve the pinned API microversion.
	ErrMicroversion = fmt.Errorf("%w: Ironic API microversion too old", errclass.ErrFailed)
	// ErrConfig: the Config is incomplete.
	ErrConfig = errors.New("ironic provisioner config")
	// ErrMACInUse: the boot MAC belongs to another Ironic node.
	ErrMACInUse = fmt.Errorf("%w: boot MAC address belongs to another Ironic node", errclass.ErrFailed)
	// ErrStateFailed: Ironic put the node into a failure state (adopt
	// failed, deploy failed, clean failed, inspect failed, ...).
	ErrStateFailed = fmt.Errorf("%w: Ironic reached a failure state", errclass.ErrFailed)
	// ErrWrongState: the node is in a state the operation cannot start from.
	ErrWrongState = fmt.Errorf("%w: node is in the wrong state for this operation", errclass.ErrFailed)
	// ErrVerify: Ironic could not verify the BMC (manage went back to enroll).
	ErrVerify = fmt.Errorf("%w: Ironic could not verify the BMC", errclass.ErrFailed)
	// ErrVerifyAuth: as ErrVerify, but the BMC refused the credentials.
	ErrVerifyAuth = fmt.Errorf("%w: Ironic could not verify the BMC", errclass.ErrAuth)
	// ErrServiceActive: day-two work on a provisioned (active) node, which
	// Ironic 21.4 cannot do (service steps arrived with API 1.87, Ironic
	// 2023.2).
	ErrServiceActive = fmt.Errorf("%w: Ironic 21.4 runs no steps on a provisioned (active) node", errclass.ErrUnsupported)
	// ErrNeedsAgentRamdisk: day-two clean steps need Ironic's agent
	// ramdisk and neither the node nor Config names one.
	ErrNeedsAgentRamdisk = fmt.Errorf("%w: Ironic's redfish BIOS, RAID and firmware clean steps need its agent ramdisk", errclass.ErrUnsupported)
	// ErrServiceTimeout: a day-two clean ran past Config.ServiceTimeout.
	ErrServiceTimeout = fmt.Errorf("%w: Ironic's day-two clean ran past its timeout", errclass.ErrFailed)
)

// classify wraps an error of a gophercloud call into one of provisioner's
// classes. what names the call, e.g. "manage node 1234".
func classify(err error, what string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, guard.ErrFenced) {
		return err // passed through unchanged
	}
	var code gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &code) {
		msg := ironicMessage(code.Body)
		switch {
		case code.Actual == http.StatusNotFound:
			return fmt.Errorf("%w: %s: Ironic answered 404: %s", errclass.ErrNotFound, what, msg)
		case code.Actual == http.StatusConflict && strings.Contains(msg, "locked"):
			// Another conductor task holds the node: try again shortly.
			return fmt.Errorf("%w: %s: node locked by Ironic: %s", errclass.ErrTransient, what, msg)
		case code.Actual == http.StatusServiceUnavailable || code.Actual >= 500 || code.Actual == http.StatusTooManyRequests:
			return fmt.Errorf("%w: %s: Ironic answered %d: %s", errclass.ErrTransient, what, code.Actual, msg)
		default:
			return fmt.Errorf("%w: %s: Ironic answered %d: %s", errclass.ErrFailed, what, code.Actual, msg)
		}
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || isConnError(err) {
		return fmt.Errorf("%w: %s: Ironic unreachable: %v", errclass.ErrTransient, what, err)
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w: %s: %v", errclass.ErrTransient, what, err)
	}
	return fmt.Errorf("%w: %s: %v", errclass.ErrFailed, what, err)
}

func isConnError(err error) bool {
	s := err.Error()
	return strings.Contains(s, "connection refused") || strings.Contains(s, "connection reset") ||
		strings.Contains(s, "EOF") || strings.Contains(s, "no such host")
}

// ironicMessage extracts the human message from an Ironic error body:
// {"error_message": "{\"faultstring\": \"…\", …}"}.
func ironicMessage(body []byte) string {
	var outer struct {
		ErrorMessage json.RawMessage `json:"error_message"`
	}
	if json.Unmarshal(body, &outer) == nil && len(outer.ErrorMessage) > 0 {
		var inner struct {
			Faultstring string `json:"faultstring"`
		}
		var s string
		if json.Unmarshal(outer.ErrorMessage, &s) == nil {
			if json.Unmarshal([]byte(s), &inner) == nil && inner.Faultstring != "" {
				return inner.Faultstring
			}
			return s
		}
		if json.Unmarshal(outer.ErrorMessage, &inner) == nil && inner.Faultstring != "" {
			return inner.Faultstring
		}
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// authFailure reports whether Ironic's last_error after a failed verify
// says the BMC refused the credentials (rather than being unreachable).
func authFailure(lastError string) bool {
	l := strings.ToLower(lastError)
	for _, k := range []string{"401", "unauthorized", "accesserror", "access error",
		"invalid credentials", "rakp", "password", "authentication"} {
		if strings.Contains(l, k) {
			return true
		}
	}
	return false
}
