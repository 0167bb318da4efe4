package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/coordinator/pivot"
	"github.com/rackfence/rackfence/shared/wire"
)

// admitHandoff runs the pivot admission for a PUT carrying a handoff
// record: only a handoff the source tier confirms is stored, marked
// Confirmed. A host already stored with the same, confirmed handoff (a GET
// applied back) keeps it without asking the source again.
func (s *Server) admitHandoff(ctx context.Context, h *wire.Host) error {
	hf := h.Handoff
	hf.Confirmed = false
	var existing *wire.Host
	if e, ok := s.state.Host(h.Name); ok {
		existing = &e
		if eh := e.Handoff; eh != nil && eh.Confirmed && eh.SourceTier == hf.SourceTier &&
			eh.SourceClusterID == hf.SourceClusterID && eh.DetachIndex == hf.DetachIndex {
			hf.Confirmed = true
			return nil
		}
	}
	if s.cfg.Pivot == nil {
		return errf(http.StatusConflict, wire.CodeConflict, "this tier has no peer tiers (--peer-tier), so it cannot confirm a handoff from tier %s", hf.SourceTier)
	}
	if err := s.cfg.Pivot.Admit(ctx, existing, h); err != nil {
		return pivotErr(err)
	}
	if !h.Handoff.Confirmed {
		return errf(http.StatusConflict, wire.CodeConflict, "the handoff from tier %s was not confirmed", hf.SourceTier)
	}
	return nil
}

func pivotErr(err error) error {
	var ae *apiError
	var ce *fsm.Error
	switch {
	case errors.As(err, &ae), errors.As(err, &ce), isStoreUnavailable(err):
		return err
	case errors.Is(err, pivot.ErrUnknownTier):
		return badField("to", "%s", err.Error())
	case errors.Is(err, pivot.ErrNotConfirmed), errors.Is(err, pivot.ErrManagedHere), errors.Is(err, pivot.ErrSourceUnreachable):
		return errf(http.StatusConflict, wire.CodeConflict, "%s", err.Error())
	}
	return errf(http.StatusConflict, wire.CodeConflict, "%s", err.Error())
}

// pivotHost runs one step of handing a host to another tier (source side).
func (s *Server) pivotHost(c echo.Context) error {
	if err := need(c, wire.RoleOperator, false, ""); err != nil {
		return err
	}
	name, err := pathName(c, "name", "name")
	if err != nil {
		return err
	}
	var req wire.PivotRequest
	if err := bind(c, &req, false); err != nil {
		return err
	}
	if err := wire.ValidateName("to", req.To); err != nil {
		return err
	}
	if req.To == s.cfg.Tier {
		return badField("to", "%q is this tier", req.To)
	}
	if s.cfg.Pivot == nil {
		return badField("to", "this tier has no peer tiers: start it with --peer-tier %s=URL --peer-token-file %s=FILE", req.To, req.To)
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), 60*time.Second)
	defer cancel()
	pr, err := s.cfg.Pivot.Step(ctx, &pivotSource{s: s, actor: actor(c)}, name, req)
	if err != nil {
		return pivotErr(err)
	}
	return c.JSON(http.StatusOK, pr)
}

// pivotSource is the source tier's store as a pivot step sees it.
type pivotSource struct {
	s     *Server
	actor string
}

func (p *pivotSource) Host(ctx context.Context, name string) (*wire.Host, error) {
	if err := p.s.store.ReadBarrier(ctx); err != nil {
		return nil, err
	}
	h, ok := p.s.state.Host(name)
	if !ok {
		return nil, notFound("host %s does not exist", name)
	}
	return &h, nil
}

func (p *pivotSource) Detach(ctx context.Context, name, reason string) (*wire.Intent, error) {
	v, err := p.s.store.Apply(ctx, fsm.PutIntentCmd{Name: name, Kind: wire.IntentDetach, Intent: wire.Intent{Reason: reason, Actor: p.actor}})
	if err != nil {
		return nil, err
	}
	in := v.(wire.Intent)
	return &in, nil
}

func (p *pivotSource) MarkPivoted(ctx context.Context, name, to string, deleteSource bool) error {
	_, err := p.s.store.Apply(ctx, fsm.SetPivotedCmd{Name: name, To: to, DeleteSource: deleteSource})
	return err
}

func (p *pivotSource) ClusterID() string { return p.s.state.ClusterID() }
