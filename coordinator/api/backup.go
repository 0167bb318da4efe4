package api

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/shared/wire"
)

// BackupContentType is the media type of GET /v1/cluster/snapshot.
const BackupContentType = "application/vnd.rackfence.backup"

// backup streams a backup file (admin only, always from the leader: the
// forward middleware relays it). The leader takes a Raft snapshot first;
// an error before the first byte is answered as JSON, one after it cuts
// the stream short, which the client's checksum catches.
func (s *Server) backup(c echo.Context) error {
	if err := need(c, wire.RoleAdmin, false, ""); err != nil {
		return err
	}
	start := time.Now()
	w := &lazyStream{c: c}
	hdr, err := s.store.Backup(w, s.cfg.Tier)
	if err != nil {
		if !w.started {
			return err
		}
		s.log.Error("backup stream cut short", "by", actor(c), "err", err)
		return nil
	}
	s.log.Info("backup sent", "by", actor(c), "index", hdr.Index, "hosts", hdr.Hosts, "bytes", hdr.BodyBytes, "took", time.Since(start).String())
	return nil
}

// lazyStream answers 200 with the first write.
type lazyStream struct {
	c       echo.Context
	started bool
}

func (l *lazyStream) Write(p []byte) (int, error) {
	if !l.started {
		l.started = true
		h := l.c.Response().Header()
		h.Set(echo.HeaderContentType, BackupContentType)
		h.Set("Cache-Control", "no-store")
		l.c.Response().WriteHeader(http.StatusOK)
	}
	return l.c.Response().Write(p)
}
