package api

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/coordinator/fsm"
	"github.com/rackfence/rackfence/shared/wire"
)

// MaxRackStatusBody is the largest rack status report accepted (413
// above): 1,000 full statuses with hardware details fit.
const MaxRackStatusBody = 8 << 20

// MaxRackStatusHosts is the most hosts one rack status report may carry;
// an agent with more sends several reports.
const MaxRackStatusHosts = 1000

// rackStatus is POST /v1/racks/{rack}/status: an agent's report for every
// host of its rack whose status is due, fenced once by the epoch and
// applied as one Raft entry. A host that fails validation, is not in the
// rack or whose touch base moved is refused by name in the answer; the
// others are written.
func (s *Server) rackStatus(c echo.Context) error {
	rack, err := s.rackParam(c, true, wire.RoleAdmin)
	if err != nil {
		return err
	}
	b, err := readBodyUpTo(c, MaxRackStatusBody, "8 MiB")
	if err != nil {
		return err
	}
	var rep wire.RackStatusReport
	if err := decodeJSON(b, &rep, false); err != nil {
		return err
	}
	if rep.Epoch == 0 {
		return fe("epoch", "is required: the epoch of the rack lease the agent holds")
	}
	if len(rep.Hosts) == 0 {
		return fe("hosts", "is empty: name at least one host")
	}
	if len(rep.Hosts) > MaxRackStatusHosts {
		return fe("hosts", "has %d entries; at most %d per report: send the rest in another one", len(rep.Hosts), MaxRackStatusHosts)
	}
	out := wire.RackStatusResult{Hosts: make([]wire.RackHostResult, len(rep.Hosts))}
	cmd := fsm.RackStatusCmd{Rack: rack, Epoch: rep.Epoch, Time: time.Now().UTC()}
	var at []int // at[k]: the request position of cmd.Hosts[k]
	seen := make(map[string]bool, len(rep.Hosts))
	for i := range rep.Hosts {
		h := &rep.Hosts[i]
		out.Hosts[i].Name = h.Name
		if err := validateRackHost(h, i, seen); err != nil {
			out.Hosts[i].Error = refusal(err)
			continue
		}
		seen[h.Name] = true
		cmd.Hosts = append(cmd.Hosts, *h)
		at = append(at, i)
	}
	if len(cmd.Hosts) > 0 {
		ctx, cancel := applyCtx(c)
		res, err := s.store.ApplyRackStatus(ctx, cmd)
		cancel()
		if err != nil {
			return err
		}
		out.Index = res.Index
		for k, r := range res.Hosts {
			out.Hosts[at[k]] = r
		}
	}
	if n := refused(out.Hosts); n > 0 {
		slog.Debug("rack status report refused some hosts", "rack", rack, "hosts", len(out.Hosts), "refused", n)
	}
	return c.JSON(http.StatusOK, out)
}

// validateRackHost checks host i of a rack report: a valid name, named
// once, and either a touch or a status (validated as the per-host write
// it stands for; the report's epoch is checked once, by rackStatus).
// Field names are the host's path in the body (hosts[3].status.state).
func validateRackHost(h *wire.RackHostReport, i int, seen map[string]bool) error {
	// The field's path is formatted only for a refusal: this runs for
	// every host of every report.
	at := func(field string) string { return fmt.Sprintf("hosts[%d].%s", i, field) }
	if err := wire.ValidateName("name", h.Name); err != nil {
		return prefixField(err, at)
	}
	if seen[h.Name] {
		return fe(at("name"), "host %s is named twice in this report; name each host once", h.Name)
	}
	if h.IsTouch() {
		if h.Status != nil || len(h.Acks) > 0 || len(h.Events) > 0 || h.Remove {
			return fe(at("touch"), "a touch carries nothing else: send status, acks, events or remove without touch")
		}
		return nil
	}
	if h.Status == nil && !h.Remove {
		return fe(at("status"), "is required unless the host is touched (touch) or removed (remove)")
	}
	r := h.PerHost(0)
	return prefixField(validateReportBody(&r), at)
}

// prefixField puts a field error's field under the host's path.
func prefixField(err error, at func(string) string) error {
	if f, ok := err.(*wire.FieldError); ok {
		return &wire.FieldError{Field: at(f.Field), Message: f.Message}
	}
	return err
}

// refusal is the wire form of a validation error of one host.
func refusal(err error) *wire.ErrorDetail {
	if f, ok := err.(*wire.FieldError); ok {
		return &wire.ErrorDetail{Code: wire.CodeBadRequest, Field: f.Field, Message: f.Message}
	}
	return &wire.ErrorDetail{Code: wire.CodeBadRequest, Message: err.Error()}
}

func refused(rs []wire.RackHostResult) int {
	n := 0
	for _, r := range rs {
		if r.Error != nil {
			n++
		}
	}
	return n
}
