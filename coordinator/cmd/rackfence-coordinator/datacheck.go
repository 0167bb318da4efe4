package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/rackfence/rackfence/coordinator"
	"github.com/rackfence/rackfence/internal/daemon"
)

// serveChecked checks the data dir's files before anything reads or writes
// it (the secrets key, TLS, the identity and the store all decide on what
// the data dir holds) and gives a damaged or missing data file its own
// exit code, from the check or from the store's open.
func serveChecked(ctx context.Context, o *Config, log *slog.Logger) error {
	if err := coordinator.CheckDataDir(o.dataDir); err != nil {
		return dataExit(err)
	}
	return dataExit(serve(ctx, o, log))
}

// dataExit makes a coordinator.ErrDataDamaged exit with
// daemon.ExitDataDamaged; other errors pass unchanged.
func dataExit(err error) error {
	if errors.Is(err, coordinator.ErrDataDamaged) {
		return daemon.Exit(daemon.ExitDataDamaged, err)
	}
	return err
}
