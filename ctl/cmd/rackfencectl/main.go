// Command rackfencectl is the operator's CLI of a rackfence coordinator
// cluster. See 'rackfencectl --help' and docs/operator.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/rackfence/rackfence/ctl"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := ctl.Main(ctx, os.Args[1:], ctl.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	stop()
	os.Exit(code)
}
