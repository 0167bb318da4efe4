package daemon

import (
	"log/slog"

	sd "github.com/coreos/go-systemd/v22/daemon"
)

// Ready tells systemd (Type=notify units) that the daemon serves. Outside
// systemd (no NOTIFY_SOCKET) it does nothing.
func Ready(log *slog.Logger) {
	ok, err := sd.SdNotify(false, sd.SdNotifyReady)
	switch {
	case err != nil:
		log.Warn("sd_notify READY failed", "err", err.Error())
	case ok:
		log.Info("notified systemd: ready")
	}
}
