package ironic

import "log/slog"

// loggerT wraps the configured logger; hosts are logged by name and node
// UUID, never with credentials.
type loggerT struct{ *slog.Logger }

func (l loggerT) host(name, uuid string) *slog.Logger {
	return l.With("host", name, "node", uuid)
}
