package api

import (
	"github.com/labstack/echo/v4"
	"github.com/rackfence/rackfence/shared/wire"
)

// statusParam reads ?status= (true or false; absent: true), which only a
// rack watch takes. An agent asks with status=false once it has its
// rack's hosts: it keeps its own copy of their statuses and would throw
// the coordinator's away (its own writes coming back), so neither side
// needs to encode or decode them.
func statusParam(c echo.Context, rack string) (bool, error) {
	switch v := c.QueryParam(wire.ParamStatus); v {
	case "", "true":
		return true, nil
	case "false":
		if rack == "" {
			return false, badField(wire.ParamStatus, "applies only to a rack watch (with rack=); the watch of every rack has brief=true")
		}
		return false, nil
	default:
		return false, badField(wire.ParamStatus, "%q is not true or false", v)
	}
}

// leaveStatusOut drops every host's status from resp and names the hosts
// that had one in resp.StatusOmitted, so the watcher can tell "no status
// yet" (a host just created) from "status left out" (a host it may not
// have seen: moved in from another rack, pivoted in) and fetch the latter
// whole. resp.Hosts are copies of the FSM's records (the records stay
// untouched); their Status pointers are only cleared.
func leaveStatusOut(resp *wire.WatchResponse) {
	for i := range resp.Hosts {
		h := &resp.Hosts[i]
		if h.Status == nil {
			continue
		}
		h.Status = nil
		resp.StatusOmitted = append(resp.StatusOmitted, h.Name)
	}
}
