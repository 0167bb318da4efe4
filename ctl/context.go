package ctl

import (
	"context"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/rackfence/rackfence/internal/version"
	"github.com/rackfence/rackfence/shared/client"
)

// Ctx is what a running command uses: its context, I/O, global flags and
// the API client (made on first use, so usage errors come before any
// request).
type Ctx struct {
	ctx context.Context
	io  IO
	g   globals
	cmd *command

	cl          *client.Client
	token       string
	tokenSource string
	// waitRequester is the power-off holder reboot --hold-off/--release
	// --wait waits on (reboot.go).
	waitRequester string
}

// Client returns the API client for --coordinator and the token.
func (x *Ctx) Client() (*client.Client, error) {
	if x.cl != nil {
		return x.cl, nil
	}
	tok, src, err := x.resolveToken()
	if err != nil {
		return nil, err
	}
	x.token, x.tokenSource = tok, src
	cl, err := client.New(client.Config{
		Coordinator: x.g.coordinator,
		Token:       tok,
		CAFile:      x.g.caFile,
		UserAgent:   version.UserAgent("rackfencectl"),
		// An operator waits a few seconds, not half a minute, to learn that
		// no member answers (an election takes one to three seconds).
		RetryFor: 8 * time.Second,
	})
	if err != nil {
		return nil, usagef("%v", err)
	}
	x.cl = cl
	return cl, nil
}

// resolveToken: --token, then --token-file, then RACKFENCE_TOKEN, then
// RACKFENCE_TOKEN_FILE. It returns the token and where it came from.
func (x *Ctx) resolveToken() (string, string, error) {
	fromFile := func(path, src string) (string, string, error) {
		t, err := client.ReadTokenFile(path)
		if err != nil {
			return "", "", &failure{code: ExitFailed, err: err, hints: []string{"the first admin token is in the coordinator's DATA-DIR/admin.token; check the path given by " + src}}
		}
		return t, src + " " + path, nil
	}
	switch {
	case x.g.token != "":
		return strings.TrimSpace(x.g.token), "--token", nil
	case x.g.tokenFile != "":
		return fromFile(x.g.tokenFile, "--token-file")
	case x.io.Getenv("RACKFENCE_TOKEN") != "":
		return strings.TrimSpace(x.io.Getenv("RACKFENCE_TOKEN")), "RACKFENCE_TOKEN", nil
	case x.io.Getenv("RACKFENCE_TOKEN_FILE") != "":
		return fromFile(x.io.Getenv("RACKFENCE_TOKEN_FILE"), "RACKFENCE_TOKEN_FILE")
	}
	return "", "", nil
}

func isTerminal(f any) bool {
	if file, ok := f.(*os.File); ok {
		return term.IsTerminal(int(file.Fd()))
	}
	return false
}

func termWidth(f any) int {
	if file, ok := f.(*os.File); ok {
		if w, _, err := term.GetSize(int(file.Fd())); err == nil {
			return w
		}
	}
	return 0
}
