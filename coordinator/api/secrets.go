package api

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/shared/wire"
)

// secretsStatus: GET /v1/secrets (admin). The leader answers with its own
// key file; ?stale=true asks the member reached about its key file.
func (s *Server) secretsStatus(c echo.Context) error {
	if err := need(c, wire.RoleAdmin, false, ""); err != nil {
		return err
	}
	if err := s.readBarrier(c); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.store.SecretsStatus())
}

// reencrypt: POST /v1/secrets/reencrypt (admin), on the leader. Re-seals
// every credentials record under the primary key, one Raft write each.
func (s *Server) reencrypt(c echo.Context) error {
	if err := need(c, wire.RoleAdmin, false, ""); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), 5*time.Minute)
	defer cancel()
	res, err := s.store.Reencrypt(ctx)
	if err != nil {
		return err
	}
	s.log.Info("secrets re-encrypted on request", "by", actor(c), "primary", res.Primary, "resealed", res.Resealed,
		"unchanged", res.Unchanged, "skipped", res.Skipped, "failed", len(res.Failed))
	return c.JSON(http.StatusOK, res)
}

// snapshot: POST /v1/cluster/snapshot (admin), answered by the member
// reached: it takes a Raft snapshot of its own state now.
func (s *Server) snapshot(c echo.Context) error {
	if err := need(c, wire.RoleAdmin, false, ""); err != nil {
		return err
	}
	idx, took, err := s.store.Snapshot()
	if err != nil {
		return err
	}
	s.log.Info("snapshot requested", "by", actor(c), "index", idx, "took", took.String())
	return c.JSON(http.StatusOK, wire.SnapshotResult{NodeID: s.store.NodeID(), Index: idx, Took: wire.Duration(took)})
}
