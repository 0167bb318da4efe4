package api

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// postTask is POST /v1/hosts/{name}/task: the rack's lease holder records
// a long BMC task it started on the host (or takes over one recorded
// under an earlier epoch), fenced by the lease epoch inside the FSM like
// a status report. Answers the record.
func (s *Server) postTask(c echo.Context) error {
	name, rack, err := s.taskTarget(c)
	if err != nil {
		return err
	}
	var req wire.BMCTaskRequest
	if err := bind(c, &req, false); err != nil {
		return err
	}
	if err := wire.ValidateBMCTask(&req); err != nil {
		return err
	}
	v, err := s.apply(c, fsm.BMCTaskCmd{Rack: rack, Name: name, Start: &req, Time: time.Now().UTC()})
	if err != nil {
		return err
	}
	task := v.(wire.BMCTask)
	slog.Info("BMC task recorded", "host", name, "rack", rack, "kind", task.Kind, "component", task.Component,
		"task", task.TaskURI, "epoch", req.Epoch, "adopted", task.AdoptedEpoch == req.Epoch)
	return c.JSON(http.StatusOK, task)
}

// deleteTask is DELETE /v1/hosts/{name}/task: the lease holder ends the
// host's task record with the task's outcome. Answers the host.
func (s *Server) deleteTask(c echo.Context) error {
	name, rack, err := s.taskTarget(c)
	if err != nil {
		return err
	}
	var req wire.BMCTaskEnd
	if err := bind(c, &req, false); err != nil {
		return err
	}
	if err := wire.ValidateBMCTaskEnd(&req); err != nil {
		return err
	}
	v, err := s.apply(c, fsm.BMCTaskCmd{Rack: rack, Name: name, End: &req, Time: time.Now().UTC()})
	if err != nil {
		return err
	}
	slog.Info("BMC task ended", "host", name, "rack", rack, "outcome", req.Outcome, "epoch", req.Epoch)
	return c.JSON(http.StatusOK, v.(wire.Host))
}

// taskTarget checks the caller may write task records (an agent, for its
// own rack, or an admin) and names the host and the rack the FSM fences
// the write by: the agent's rack, or for an admin the host's.
func (s *Server) taskTarget(c echo.Context) (name, rack string, err error) {
	if name, err = pathName(c, "name", "name"); err != nil {
		return "", "", err
	}
	id := who(c)
	if id.Role != wire.RoleAgent && id.Role != wire.RoleAdmin {
		return "", "", forbidden("only an agent token (or admin) may record BMC tasks; this token has role %s", id.Role)
	}
	rack = id.Rack
	if id.Role == wire.RoleAdmin {
		h, ok := s.state.Host(name)
		if !ok {
			return "", "", notFound("host %s does not exist", name)
		}
		rack = h.Rack
	}
	return name, rack, nil
}
