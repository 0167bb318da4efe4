package chaos

import (
	"log/slog"
	"os"
	"path/filepath"
)

// openRunDir creates the run's directory and returns the harness's
// logger: cfg.Log, or JSON to DIR/harness.log. done closes that file (a
// no-op for cfg.Log); the scheduled runs and the flash scenario share it.
func openRunDir(cfg Config) (log *slog.Logger, done func(), err error) {
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, nil, err
	}
	if cfg.Log != nil {
		return cfg.Log, func() {}, nil
	}
	f, err := os.Create(filepath.Join(cfg.Dir, "harness.log"))
	if err != nil {
		return nil, nil, err
	}
	return slog.New(slog.NewJSONHandler(f, nil)), func() { f.Close() }, nil
}
