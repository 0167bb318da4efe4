package ctl

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/rackfence/rackfence/shared/client"
	"github.com/rackfence/rackfence/shared/wire"
)

// Exit codes of the contract.
const (
	ExitOK          = 0
	ExitFailed      = 1
	ExitUsage       = 2
	ExitNotFound    = 3
	ExitConflict    = 4
	ExitUnreachable = 5
)

// UsageError is a command line rackfencectl cannot run (exit 2): a missing
// or extra argument, a flag value outside its allowed set, a bad input file.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, a ...any) error { return &UsageError{Msg: fmt.Sprintf(format, a...)} }

// failure is an operation that failed with a known exit code and hints on
// what to do next.
type failure struct {
	code  int
	err   error
	hints []string
}

func (f *failure) Error() string { return f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

// failf is an operation failure (exit 1) with a message.
func failf(format string, a ...any) error {
	return &failure{code: ExitFailed, err: fmt.Errorf(format, a...)}
}

// withHints keeps err's exit code (code 0: derived from err) and adds hints.
func withHints(err error, hints ...string) error {
	if err == nil || len(hints) == 0 {
		return err
	}
	return &failure{err: err, hints: hints}
}

func usageFail(io IO, cmd *command, msg string) int {
	fmt.Fprintf(io.Stderr, "error: %s\n", msg)
	fmt.Fprintf(io.Stderr, "usage: rackfencectl %s %s\nRun 'rackfencectl %s --help' for more.\n", cmd.path, cmd.usage, cmd.path)
	return ExitUsage
}

// finish prints err with hints and returns the exit code.
func (x *Ctx) finish(err error) int {
	if err == nil {
		return ExitOK
	}
	var ue *UsageError
	if errors.As(err, &ue) {
		return usageFail(x.io, x.cmd, ue.Msg)
	}
	code, hints := x.classify(err)
	fmt.Fprintf(x.io.Stderr, "error: %s\n", strings.TrimSpace(err.Error()))
	for _, h := range hints {
		fmt.Fprintf(x.io.Stderr, "hint: %s\n", h)
	}
	return code
}

// classify maps an error to its exit code and what the operator can do.
func (x *Ctx) classify(err error) (int, []string) {
	var f *failure
	if errors.As(err, &f) {
		code, more := x.classifyAPI(f.err)
		if f.code != 0 {
			code = f.code
		}
		return code, append(append([]string(nil), f.hints...), more...)
	}
	return x.classifyAPI(err)
}

func (x *Ctx) classifyAPI(err error) (int, []string) {
	switch {
	case client.IsUnreachable(err):
		return ExitUnreachable, []string{
			"is the coordinator running there? Point rackfencectl at another member with --coordinator URL or RACKFENCE_COORDINATOR (several URLs comma-separated).",
		}
	case errors.Is(err, context.Canceled):
		return ExitFailed, []string{"interrupted; what was already requested stays in place"}
	}
	e, ok := client.AsError(err)
	if !ok {
		return ExitFailed, nil
	}
	switch e.Status {
	case http.StatusNotFound:
		return ExitNotFound, nil
	case http.StatusConflict:
		return ExitConflict, nil
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return ExitUsage, nil
	case http.StatusUnauthorized:
		if x.token == "" {
			return ExitFailed, []string{tokenHint("no token was given")}
		}
		return ExitFailed, []string{tokenHint("the coordinator does not know the token given by " + x.tokenSource)}
	case http.StatusForbidden:
		return ExitFailed, []string{"the token's role (or rack) does not allow this; use a token with a stronger role (viewer < operator < admin), made with 'rackfencectl token create --role ROLE'"}
	case http.StatusTooManyRequests:
		return ExitFailed, []string{"this address sent too many unknown or expired tokens; wait the time the message says, and check --token-file / RACKFENCE_TOKEN (the coordinator counts failures per client address)"}
	case http.StatusServiceUnavailable:
		switch e.Code {
		case wire.CodeUpgradeRequired:
			return ExitFailed, []string{"a coordinator member runs an older binary that cannot apply this write: upgrade the members the message names ('rackfencectl cluster status' shows each member's version), then retry"}
		case wire.CodeMemberStopped:
			return ExitFailed, []string{"this member stopped applying the Raft log: point rackfencectl at another member (--coordinator URL), and upgrade this one (its GET /v1/health says why)"}
		}
		return ExitFailed, []string{"the cluster has no leader: check 'rackfencectl cluster status' on each member; a majority of members must be up"}
	}
	return ExitFailed, nil
}

func tokenHint(why string) string {
	return why + ". The first admin token is in the coordinator's DATA-DIR/admin.token (written at first bootstrap, mode 0600); pass it with --token-file FILE or RACKFENCE_TOKEN_FILE=FILE, and make narrower tokens with 'rackfencectl token create --role operator'"
}
